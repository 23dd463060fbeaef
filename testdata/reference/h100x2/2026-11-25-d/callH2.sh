#!/usr/bin/env bash
# Call H2 (2026-11-25, fourth session): every GPU test of p2pbench HEAD on the 2× H100 of call H.
set -u
W=/tmp/wH2; mkdir -p $W/gpu-tests
for p in cuda nvml measure bench ipc; do
  (cd $p && timeout 200 $PWD/../.gpu/$p.test -test.v -test.run GPU) > $W/gpu-tests/$p.log 2>&1; echo "$p GPU tests rc=$? $(grep -c '^--- PASS' $W/gpu-tests/$p.log) passed, $(grep -c '^--- FAIL' $W/gpu-tests/$p.log) failed $(grep '^--- FAIL' $W/gpu-tests/$p.log | head -3 | tr '\n' ' ')"
done
tar czf $OUT/callH2-tests.tgz -C $W gpu-tests
