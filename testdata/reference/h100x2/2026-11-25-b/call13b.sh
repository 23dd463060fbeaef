#!/usr/bin/env bash
# Call 13b (2026-11-25, second session): the reference set — five all runs in separate processes, each checked; the GPU tests; the report of run 1.
set -u
W=/tmp/w13b; mkdir -p $W; P=$PWD/.gpu/p2pbench
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
for i in 1 2 3 4 5; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(cat $W/all$i.time) $(head -1 $W/all$i.trace | grep -o 'estimated.*')"
  $P check $W/all$i/results.json > $W/check$i.txt 2>&1; echo "check$i rc=$? $(grep -m1 VERDICT $W/check$i.txt)"
done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
$P report $W/all1/results.json -o $W/report1.pdf > $W/report1.log 2>&1; echo "report rc=$?"
$P check $W/all1/results.json --format prometheus > $W/metrics1.prom 2>&1; $P check $W/all1/results.json --format junit > $W/junit1.xml 2>&1
OUT=$W/gpu-tests TIMEOUT=300 bash .gpu/gpu-run.sh tests > $W/gpu-tests.txt 2>&1; grep -E "^--- FAIL|^FAIL|^ok|rc=" $W/gpu-tests.txt | head -30
(cd nvml && ../.gpu/nvml.test -test.run GPUIdentity -test.v) > $W/identity-test.txt 2>&1; echo "identity rc=$?"
cp /tmp/p2pwork/*-gpu-tests.log $W/ 2>/dev/null
tar czf $OUT/call13b.tgz -C $W .
