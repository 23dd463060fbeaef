#!/usr/bin/env bash
# Call B1 (2026-11-25, third session): the reference set — nvbandwidth v0.8 and the plain probes, five `all` runs in separate processes (each checked), and a renewal experiment (small SM copies, default renewals against all); same lease as B2 (the GPU tests).
set -u
W=/tmp/wB; mkdir -p $W/probes; P=$PWD/.gpu1/p2pbench
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | grep -iE "serial|part number|vbios|product name" ; } > $W/machine.txt 2>&1
t build; (bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
for p in ipcprobe pullprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p .peers/probes/$p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done
wait; tail -1 $W/nvb-build.log
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
t probes; /tmp/pullprobe > $W/probes/pullprobe.txt 2>&1; tail -3 $W/probes/pullprobe.txt | cut -c1-160
/tmp/ipcprobe > $W/probes/ipcprobe.txt 2>&1; tail -4 $W/probes/ipcprobe.txt | cut -c1-160
t all
for i in 1 2 3 4 5; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(cat $W/all$i.time) $(head -1 $W/all$i.trace | grep -o 'estimated.*')"
  $P check $W/all$i/results.json > $W/check$i.txt 2>/dev/null; echo "check$i rc=$? $(grep -m1 VERDICT $W/check$i.txt)"
done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
t renew; mkdir -p $W/renew
for i in 1 2 3; do for r in default all; do
  $P bw --tests sm_read,sm_write,ce_read --size 64MiB --sizes 4B:1MiB:4 --renew $( [ $r = all ] && echo all || echo offset,streams,events,modules,small ) -o $W/renew/$r$i.json > $W/renew/$r$i.txt 2>&1; echo "renew $r$i rc=$?"
done; done
t nvbandwidth; /tmp/nvb/nvbandwidth -j > $W/nvbandwidth-v0.8.json 2> $W/nvbandwidth.err; echo nvb rc=$?
$P report $W/all1/results.json -o $W/report1.pdf > $W/report1.log 2>&1; echo "report rc=$?"
$P check $W/all1/results.json --format prometheus > $W/metrics1.prom 2>/dev/null; $P check $W/all1/results.json --format junit > $W/junit1.xml 2>/dev/null
cp /tmp/nvb/build/CMakeCache.txt $W/nvb-cmakecache.txt 2>/dev/null
tar czf $OUT/callB1.tgz -C $W .
t done
