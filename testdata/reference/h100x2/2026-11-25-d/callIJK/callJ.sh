#!/usr/bin/env bash
# Call J (2026-11-25, fourth session): ctxprobe3 — the parts of a fresh context's cost, and whether streams or green contexts take their own mode of small SM copies; three processes.
set -u
W=/tmp/wJ; mkdir -p $W
nvcc -O2 -arch=sm_90 -o /tmp/ctxprobe3 .peers/probes/ctxprobe3.cu -lcuda > $W/nvcc.log 2>&1 || { head -20 $W/nvcc.log; exit 1; }
for k in 1 2 3; do echo "== process $k"; /tmp/ctxprobe3 .peers/probes 2>&1 | tee -a $W/ctxprobe3.txt; done
tar czf $OUT/callJ.tgz -C $W .
