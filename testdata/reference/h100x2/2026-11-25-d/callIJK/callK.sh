#!/usr/bin/env bash
# Call K (2026-11-25, fourth session): ctxprobe4 in three processes.
set -u
W=/tmp/wK; mkdir -p $W
nvcc -O2 -arch=sm_90 -o /tmp/ctxprobe4 .peers/probes/ctxprobe4.cu -lcuda > $W/nvcc.log 2>&1 || { head -20 $W/nvcc.log; exit 1; }
for k in 1 2 3; do echo "== process $k"; /tmp/ctxprobe4 .peers/probes 2>&1 | tee -a $W/ctxprobe4.txt; done
tar czf $OUT/callK.tgz -C $W .
