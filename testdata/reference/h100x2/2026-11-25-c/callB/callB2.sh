#!/usr/bin/env bash
# Call B2 (2026-11-25, third session): every GPU test, same lease as B1.
set -u
W=/tmp/wB2; mkdir -p $W
OUT2=$OUT; OUT=$W/gpu-tests TIMEOUT=300 bash .gpu/gpu-run.sh tests > $W/gpu-tests.txt 2>&1; grep -E "^--- FAIL|^FAIL|^ok|rc=" $W/gpu-tests.txt | head -30
(cd nvml && ../.gpu/nvml.test -test.run GPUIdentity -test.v) > $W/identity-test.txt 2>&1; echo "identity rc=$?"
cp /tmp/p2pwork/*-gpu-tests.log $W/ 2>/dev/null
tar czf $OUT2/callB2.tgz -C $W .
