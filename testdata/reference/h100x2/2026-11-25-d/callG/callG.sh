#!/usr/bin/env bash
# Call G (2026-11-25, fourth session): three `all` runs of e7b1080's parent 1c49aea (host checks on the GPU, NVLink sums, registered host memory, children started ahead — reverted after this call), then the cuda and nvml GPU tests.
set -u
W=/tmp/wG; mkdir -p $W; P=$PWD/.gpu/p2pbench
nvidia-smi -L > $W/machine.txt 2>&1
for i in 1 2 3; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(cat $W/all$i.time) $(grep -o 'estimated.*' $W/all$i.trace | head -1)"
done
(cd cuda && timeout 200 $PWD/../.gpu/cuda.test -test.v -test.run GPU) > $W/cuda-gpu-tests.log 2>&1; echo "cuda tests rc=$?"; grep -E "^(--- |FAIL|ok|PASS)" $W/cuda-gpu-tests.log | head -30
(cd nvml && timeout 100 $PWD/../.gpu/nvml.test -test.v -test.run GPU) > $W/nvml-gpu-tests.log 2>&1; echo "nvml tests rc=$?"; grep -E "^(--- |FAIL|ok|PASS)" $W/nvml-gpu-tests.log | head -30
tar czf $OUT/callG.tgz -C $W .
