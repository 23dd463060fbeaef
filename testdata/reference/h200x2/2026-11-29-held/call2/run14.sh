#!/usr/bin/env bash
# Two-GPU lease: the build with held windows for every device both ways to and from the host (lead f8f590d):
# two `all` runs each checked and compared with each other and with the previous call's two (main c02614e:
# the method change is labelled, not gated); nvbandwidth's host tests in the same lease; GPU tests of
# measure and bench.
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W/logs
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 300 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for i in 1 2; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.txt 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
t compare12 $G/p2pbench compare --fail-on-regression $W/all1/results.json $W/all2/results.json > $W/compare12.txt 2>&1
t compare-prev $G/p2pbench compare --fail-on-regression .probe/prev13/all1.json.gz .probe/prev13/all2.json.gz -- $W/all1/results.json $W/all2/results.json > $W/compare-prev.txt 2>&1
for p in measure bench; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/logs/gpu-tests-$p.log 2>&1); done
wait $B
t nvbandwidth /tmp/nvb/nvbandwidth -j -t host_to_all_bidirectional_memcpy_ce all_to_host_bidirectional_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce host_to_all_memcpy_ce all_to_host_memcpy_ce > $W/nvbandwidth.json 2> $W/nvbandwidth.err
t all3 $G/p2pbench all --tests host_all_bidir,host_to_all,host_bidir --dir $W/all3 > $W/all3.txt 2>&1
cat $W/steps.txt | tr '\n' ' '; echo; for f in $W/logs/gpu-tests-*.log; do echo "$f $(grep -c -- '--- PASS' $f) pass $(grep -c -- '--- FAIL' $f) fail $(grep -c -- '--- SKIP' $f) skip"; done
grep -h -m1 VERDICT $W/check*.txt; grep -h Flagged $W/compare*.txt; grep -h -i "method" $W/compare-prev.txt | head -5
cd $W && for d in all1 all2 all3; do gzip -9 $d/results.json; done; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
