#!/usr/bin/env bash
# Call V (2026-11-25, fifth session): the first `all` of the build with the kernels compiled aside (a64c6f0), on a
# fresh machine, then a second; busyprobe: 4-byte pulls back to back with the GPUs idle or running kernels.
set -u
W=/tmp/wV; mkdir -p $W; tar xzf .gpuz/one.tgz; P=$PWD/.gpu1/p2pbench
nvidia-smi -L > $W/machine.txt
for i in 1 2; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace
  [ $i = 1 ] && { nvcc -O2 -arch=sm_90 -o /tmp/busyprobe .gpuz/busyprobe.cu > $W/nvcc.log 2>&1 || echo nvcc failed; }
done
timeout 60 /tmp/busyprobe > $W/busyprobe.txt 2>&1
tar czf $OUT/callV.tgz -C $W .
