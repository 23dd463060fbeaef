#!/usr/bin/env bash
# Call N (2026-11-25, fourth session): the reference set of p2pbench HEAD — nvbandwidth v0.8 and the plain probes, five `all` runs in separate processes (each checked), the report and check formats of run 1.
set -u
W=/tmp/wN; mkdir -p $W/probes; P=$PWD/.gpu1/p2pbench
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | grep -iE "serial|part number|vbios|product name" ; } > $W/machine.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
for p in ipcprobe pullprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p .peers/probes/$p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done
t probes; /tmp/pullprobe > $W/probes/pullprobe.txt 2>&1; tail -3 $W/probes/pullprobe.txt | cut -c1-160
/tmp/ipcprobe > $W/probes/ipcprobe.txt 2>&1; tail -4 $W/probes/ipcprobe.txt | cut -c1-160
wait; tail -1 $W/nvb-build.log
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
t all
for i in 1 2 3 4 5; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time) $(grep -o 'estimated [0-9a-z]*' $W/all$i.trace | head -1)"
  $P check $W/all$i/results.json > $W/check$i.txt 2>/dev/null; echo "check$i rc=$? $(grep -m1 VERDICT $W/check$i.txt)"
done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
t nvbandwidth; /tmp/nvb/nvbandwidth -j > $W/nvbandwidth-v0.8.json 2> $W/nvbandwidth.err; echo nvb rc=$?
$P report $W/all1/results.json -o $W/report1.pdf > $W/report1.log 2>&1; echo "report rc=$?"
$P check $W/all1/results.json --format prometheus > $W/metrics1.prom 2>/dev/null; $P check $W/all1/results.json --format junit > $W/junit1.xml 2>/dev/null
tar czf $OUT/callN.tgz -C $W .
t done
