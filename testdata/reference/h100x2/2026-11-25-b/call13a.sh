#!/usr/bin/env bash
# Call 13a (2026-11-25, second session): nvbandwidth v0.8 and the plain probes, same lease as call 9b's five runs.
set -u
W=/tmp/w13a; mkdir -p $W
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | grep -iE "serial|part number|vbios|product name" ; } > $W/smi.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
NVB=$!
cd .peers/probes
for p in ipcprobe pullprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p $p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done
cd ../..
wait $NVB; tail -1 $W/nvb-build.log
t pullprobe; /tmp/pullprobe > $W/pullprobe.txt 2>&1; tail -4 $W/pullprobe.txt | cut -c1-160
t ipcprobe; /tmp/ipcprobe > $W/ipcprobe.txt 2>&1; tail -6 $W/ipcprobe.txt
t nvbandwidth; /tmp/nvb/nvbandwidth -j > $W/nvbandwidth.json 2> $W/nvbandwidth.err; echo rc=$?
tar czf $OUT/call13a.tgz -C $W .
