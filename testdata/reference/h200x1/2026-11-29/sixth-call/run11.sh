#!/usr/bin/env bash
# One-GPU lease: main's build at the session's end: GPU tests, two `all` runs each checked, compared with each
# other and with the fourth call's runs (build 60508b7), nvbandwidth's host and local tests beside them.
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; P=testdata/reference/h200x1/2026-11-29/fourth-call; mkdir -p $W/logs
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
nvidia-smi -q > $W/smi-q.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/logs/gpu-tests-$p.log 2>&1); done
for i in 1 2; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.txt 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
t compare12 $G/p2pbench compare --fail-on-regression $W/all1/results.json $W/all2/results.json > $W/compare12.txt 2>&1
zcat $P/all1.json.gz > /tmp/prev1.json; zcat $P/all2.json.gz > /tmp/prev2.json
t compare-prev $G/p2pbench compare --fail-on-regression /tmp/prev1.json /tmp/prev2.json -- $W/all1/results.json $W/all2/results.json > $W/compare-prev.txt 2>&1
wait $B
t nvbandwidth /tmp/nvb/nvbandwidth -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy host_to_device_memcpy_sm device_to_host_memcpy_sm > $W/nvbandwidth.json 2> $W/nvbandwidth.err
cat $W/steps.txt | tr '\n' ' '; echo; for f in $W/logs/gpu-tests-*.log; do tail -n 1 $f; grep -c -- "--- PASS" $f; grep -c -- "--- FAIL" $f; done; grep -h -m1 "VERDICT" $W/check*.txt; grep -h -m1 "Flagged" $W/compare*.txt
cd $W && for d in all1 all2; do gzip -9 $d/results.json; done; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
