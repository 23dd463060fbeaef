#!/usr/bin/env bash
# Call Z (2026-11-25, fifth session): every GPU test of the last build on one GPU.
set -u
W=/tmp/wZ; mkdir -p $W/gpu-tests; tar xzf .gpuz/gpu.tgz; G=$PWD/.gpu
nvidia-smi -L > $W/machine.txt
for pkg in cuda nvml measure bench ipc; do (cd $pkg && timeout 200 $G/$pkg.test -test.v -test.run GPU > $W/gpu-tests/$pkg.log 2>&1; echo "$pkg rc=$? $(grep -c -- '--- PASS' $W/gpu-tests/$pkg.log) passed, $(grep -c -- '--- FAIL' $W/gpu-tests/$pkg.log) failed, $(grep -c -- '--- SKIP' $W/gpu-tests/$pkg.log) skipped"); done
grep -h -- "--- FAIL" $W/gpu-tests/*.log | head
tar czf $OUT/callZ.tgz -C $W .
