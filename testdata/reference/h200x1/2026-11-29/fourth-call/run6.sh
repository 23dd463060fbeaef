#!/usr/bin/env bash
# One-GPU lease: the measuring run in package session on the real driver: GPU tests, three `all` runs checked and compared, bw with a trace, same-GPU ipc, nvbandwidth's host and local tests alone.
[ -d .gpu ] || tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/gpu-tests-$p.log 2>&1); done
wait $B
for i in 1 2 3; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.log 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
for a in 1 2; do for b in 2 3; do [ $a -lt $b ] && t compare$a$b $G/p2pbench compare --fail-on-regression $W/all$a/results.json $W/all$b/results.json > $W/compare$a$b.txt 2>&1; done; done
P2PBENCH_TRACE=1 t bwtrace $G/p2pbench bw --tests ce_read,h2d --sizes none -o $W/bw.json > $W/bw.out 2> $W/bw.trace
t ipc $G/p2pbench ipc --devices 0 -o $W/ipc.json > $W/ipc.out 2>&1
t nvb /tmp/nvb/nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy host_to_device_memcpy_sm device_to_host_memcpy_sm -j > $W/nvbandwidth.json 2> $W/nvbandwidth.err
t report $G/p2pbench report -o $W/report1.pdf $W/all1/results.json > $W/report1.log 2>&1
cat $W/steps.txt; for f in $W/gpu-tests-*.log; do tail -n 1 $f; done; grep -h -m1 "VERDICT" $W/check*.txt; grep -h -m1 "Flagged" $W/compare*.txt; tail -3 $W/ipc.out; tail -3 $W/bw.trace
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
