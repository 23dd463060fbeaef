#!/usr/bin/env bash
# Call AC (2026-11-26, sixth session): 1 MiB pulls queued as issued over 8 s (pullqueueprobe), the chase
# starting where its build began (lat --tests lat_chase, three processes), one `all` run.
set -u
P=$PWD/.gpu1/p2pbench
nvcc -O2 -arch=sm_90 -o /tmp/pq tools/probes/pullqueueprobe.cu > $OUT/nvcc.log 2>&1 || echo nvcc failed
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/machine.txt
for r in a b; do for src in 0 1; do timeout 30 /tmp/pq $src 1048576 > $OUT/pq-$src-$r.txt 2>&1; echo "pq $src $r rc=$?"; done; done
for i in 1 2 3; do timeout 60 $P lat --tests lat_chase -o $OUT/chase$i.json > $OUT/chase$i.txt 2>&1; echo "chase$i rc=$?"; done
timeout 120 env P2PBENCH_TRACE=1 $P all --dir $OUT/all1 > $OUT/all1.txt 2> $OUT/all1.trace; echo "all1 rc=$?"
