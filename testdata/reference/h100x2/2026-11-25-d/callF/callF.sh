#!/usr/bin/env bash
# Call F (2026-11-25, fourth session): probes (NVML counter reading cost, pinning cost, small SM copy modes per context) and two `all` runs of main with host checks on the GPU.
set -u
W=/tmp/wF; mkdir -p $W; P=$PWD/.gpu1/p2pbench
t() { echo "== $* ($(date +%T))"; }
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag > $W/thp.txt 2>&1; nproc >> $W/thp.txt
nvidia-smi -L > $W/machine.txt 2>&1
for p in ctxprobe pinprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p .peers/probes/$p.cu -lcuda > $W/nvcc-$p.log 2>&1 || { echo "nvcc $p failed"; cat $W/nvcc-$p.log | head; }; done
gcc -O2 -o /tmp/nvmlprobe .peers/probes/nvmlprobe.c -ldl
t nvml; /tmp/nvmlprobe > $W/nvmlprobe.txt 2>&1; cat $W/nvmlprobe.txt
t pin; /tmp/pinprobe > $W/pinprobe.txt 2>&1; cat $W/pinprobe.txt; cat $W/thp.txt
t ctx; /tmp/ctxprobe .peers/probes/copy.ptx 6 > $W/ctxprobe-a.txt 2>&1; cat $W/ctxprobe-a.txt
for i in 1 2 3; do /tmp/ctxprobe .peers/probes/copy.ptx 1 > $W/ctxprobe-p$i.txt 2>&1; cat $W/ctxprobe-p$i.txt; done
t all
for i in 1 2; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(cat $W/all$i.time) $(head -3 $W/all$i.trace | grep -o 'estimated.*')"
done
tar czf $OUT/callF.tgz -C $W .
t done
