#!/usr/bin/env bash
# Two-GPU lease: main's build c02614e (the session's command-line moves, the atomic check's reused buffer):
# GPU tests (the two-GPU ones too), two `all` runs each checked and compared; nvbandwidth (every test) in the
# same lease; the host-copies-both-ways probe (tools/probes/hostbidirprobe.cu: each copy timed alone, all at
# once each by its own events, all at once held busy) to settle host_all_bidir's timing.
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W/logs
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 300 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
nvidia-smi -q > $W/smi-q.txt 2>&1; nvidia-smi topo -m > $W/topo.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
(cd .probe && nvcc -O2 -arch=sm_90 -o /tmp/hbp hostbidirprobe.cu > $W/probe-build.log 2>&1)
for i in 1 2; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.txt 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
t compare12 $G/p2pbench compare --fail-on-regression $W/all1/results.json $W/all2/results.json > $W/compare12.txt 2>&1
t probe4 /tmp/hbp 4 > $W/hostbidirprobe-n4.txt 2>&1
wait $B
t nvbandwidth /tmp/nvb/nvbandwidth -j > $W/nvbandwidth.json 2> $W/nvbandwidth.err
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/logs/gpu-tests-$p.log 2>&1); done
t probe16 /tmp/hbp 16 > $W/hostbidirprobe-n16.txt 2>&1
cat $W/steps.txt | tr '\n' ' '; echo; for f in $W/logs/gpu-tests-*.log; do echo "$f $(grep -c -- '--- PASS' $f) pass $(grep -c -- '--- FAIL' $f) fail $(grep -c -- '--- SKIP' $f) skip"; done
grep -h -m1 VERDICT $W/check*.txt; grep -h Flagged $W/compare12.txt; cat $W/hostbidirprobe-n4.txt | tail -30
cd $W && for d in all1 all2; do gzip -9 $d/results.json; done; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
