#!/usr/bin/env bash
# Call AF (2026-11-26, sixth session): back-to-back 4-byte pulls, windows waited for or queued together
# (b2bqueueprobe), in three processes; pullprobe once.
set -u
mkdir -p /tmp/w
nvcc -O2 -arch=sm_90 -o /tmp/bq tools/probes/b2bqueueprobe.cu > /tmp/w/nvcc.log 2>&1 || { echo nvcc failed; cat /tmp/w/nvcc.log; }
nvcc -O2 -arch=sm_90 -o /tmp/pullprobe .peers/probes/pullprobe.cu -lcuda > /tmp/w/nvcc2.log 2>&1 || echo nvcc2 failed
for i in 1 2 3; do timeout 60 /tmp/bq > /tmp/w/b2bqueue-$i.txt 2>&1; echo "bq $i rc=$?"; done
timeout 60 /tmp/pullprobe > /tmp/w/pullprobe.txt 2>&1; echo "pullprobe rc=$?"
tar czf $OUT/callAF.tgz -C /tmp/w .
