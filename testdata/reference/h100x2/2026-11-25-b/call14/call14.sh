#!/usr/bin/env bash
# Call 14 (2026-11-25, second session): after the house refactors (catalogue shapes, measure moved, layering) — one all, the GPU tests.
set -u
W=/tmp/w14; mkdir -p $W; P=$PWD/.gpu/p2pbench
/usr/bin/time -f "%e s wall" -o $W/all1.time env P2PBENCH_TRACE=1 $P all --dir $W/all1 > $W/all1.txt 2> $W/all1.trace; echo "all1 rc=$? $(tail -1 $W/all1.time) $(grep -o 'estimated [0-9]*s' $W/all1.trace)"
grep -E "start:|end:" $W/all1.trace
OUT=$W/gpu-tests TIMEOUT=300 bash .gpu/gpu-run.sh tests > $W/gpu-tests.txt 2>&1; grep -E "^--- FAIL|^FAIL|rc=" $W/gpu-tests.txt | head -20
cp /tmp/p2pwork/*-gpu-tests.log $W/ 2>/dev/null
tar czf $OUT/call14.tgz -C $W .
