#!/usr/bin/env bash
# The session's last builds (main 40816a5, then 121559a), one `all` run checked, on whichever machine this call has
# (2x or 1x H200); nvbandwidth's host tests both ways beside it; on two GPUs, compared with the first
# call's runs (main c02614e) where the held host copies both ways are labelled as another method.
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 300 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
nvidia-smi -L > $W/smi-L.txt
t all1 $G/p2pbench all --dir $W/all1 > $W/all1.txt 2>&1
t check1 $G/p2pbench check $W/all1/results.json > $W/check1.txt 2>&1
n=$(nvidia-smi -L | wc -l)
[ "$n" -ge 2 ] && t compare-prev $G/p2pbench compare .probe/prev13/all1.json.gz .probe/prev13/all2.json.gz -- $W/all1/results.json > $W/compare-prev.txt 2>&1
wait $B
t nvbandwidth /tmp/nvb/nvbandwidth -j -t host_to_all_bidirectional_memcpy_ce all_to_host_bidirectional_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce > $W/nvbandwidth.json 2> $W/nvbandwidth.err
cat $W/steps.txt | tr '\n' ' '; echo; grep -h -m1 VERDICT $W/check1.txt; grep -h "^  [A-Z]" $W/check1.txt | head -9; grep -h Flagged $W/compare-prev.txt 2>/dev/null
cd $W && gzip -9 all1/results.json; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
