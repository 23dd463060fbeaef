#!/usr/bin/env bash
# Call I (2026-11-25, fourth session): what sets the mode of small SM copies (issue 25): ctxprobe2 in
# fresh contexts of one process, in processes pinned to each quarter of the CPUs, and unpinned.
set -u
W=/tmp/wI; mkdir -p $W
nvcc -O2 -arch=sm_90 -o /tmp/ctxprobe2 .peers/probes/ctxprobe2.cu -lcuda > $W/nvcc.log 2>&1 || { head $W/nvcc.log; exit 1; }
lscpu > $W/lscpu.txt 2>&1; numactl -H > $W/numa.txt 2>&1
echo "== one process, 8 fresh contexts"; /tmp/ctxprobe2 .peers/probes 8 | tee $W/one-process.txt
for c in 0-7 8-15 16-23 24-31; do for k in 1 2; do echo "== taskset $c, process $k"; taskset -c $c /tmp/ctxprobe2 .peers/probes 2 | tee -a $W/pinned-$c.txt; done; done
for k in 1 2 3 4; do echo "== unpinned process $k"; /tmp/ctxprobe2 .peers/probes 2 | tee -a $W/unpinned.txt; done
tar czf $OUT/callI.tgz -C $W .
