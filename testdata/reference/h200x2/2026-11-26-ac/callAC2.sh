#!/usr/bin/env bash
# Call AC2 (2026-11-26, sixth session): 1 MiB pulls queued as issued over 8 s (pullqueueprobe), both ways, twice.
set -u
mkdir -p /tmp/w
nvcc -O2 -arch=sm_90 -o /tmp/pq tools/probes/pullqueueprobe.cu > /tmp/w/nvcc.log 2>&1 || { echo nvcc failed; cat /tmp/w/nvcc.log; }
for r in a b; do for src in 0 1; do timeout 30 /tmp/pq $src 1048576 > /tmp/w/pq-$src-$r.txt 2>&1; echo "pq $src $r rc=$?"; done; done
tar czf $OUT/callAC2.tgz -C /tmp/w .
