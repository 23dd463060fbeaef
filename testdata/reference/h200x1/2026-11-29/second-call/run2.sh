#!/usr/bin/env bash
# One-GPU lease: local copy probe beside nvbandwidth's device_local_copy; three `all` runs each checked; compares.
[ -d .gpu ] || tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W/probes
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" | tee -a $W/steps.txt; }
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
nvcc -O2 -arch=sm_90 -o /tmp/localprobe tools/probes/localprobe.cu > $W/probes/nvcc.log 2>&1 || echo nvcc failed
wait $B
for i in 1 2; do t localprobe$i /tmp/localprobe 0 > $W/probes/localprobe-$i.txt 2>&1; done
for i in 1 2 3; do t nvb-local$i /tmp/nvb/nvbandwidth -t device_local_copy -j > $W/probes/nvbandwidth-local-$i.json 2>&1; done
for i in 1 2 3; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.log 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
for a in 1 2; do for b in 2 3; do [ $a -lt $b ] && t compare$a$b $G/p2pbench compare --fail-on-regression $W/all$a/results.json $W/all$b/results.json > $W/compare$a$b.txt 2>&1; done; done
t report $G/p2pbench report -o $W/report1.pdf $W/all1/results.json > $W/report1.log 2>&1
(cd bench && t test-bench $G/bench.test -test.v -test.run GPU > $W/gpu-tests-bench.log 2>&1)
(cd measure && t test-measure $G/measure.test -test.v -test.run GPU > $W/gpu-tests-measure.log 2>&1)
cat $W/steps.txt; cat $W/probes/localprobe-1.txt; grep -h -A12 "Verdict ====" $W/check1.txt | tail -11
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
