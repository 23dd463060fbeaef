#!/usr/bin/env bash
# Call M2 (2026-11-25, fourth session): every GPU test of the build of call M, on its two GPUs.
set -u
W=/tmp/wM2; mkdir -p $W/gpu-tests
nvidia-smi -L > $W/gpu-tests/machine.txt 2>&1
for p in cuda nvml measure bench ipc; do
  (cd $p && timeout 200 $PWD/../.gpu/$p.test -test.v -test.run GPU) > $W/gpu-tests/$p.log 2>&1; echo "$p GPU tests rc=$? $(grep -c '^--- PASS' $W/gpu-tests/$p.log) passed, $(grep -c '^--- FAIL' $W/gpu-tests/$p.log) failed $(grep '^--- FAIL' $W/gpu-tests/$p.log | head -3 | tr '\n' ' ')"
done
tar czf $OUT/callM2-tests.tgz -C $W gpu-tests
