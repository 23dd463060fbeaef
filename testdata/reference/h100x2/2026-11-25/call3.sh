#!/usr/bin/env bash
# Call 3 (2026-11-25): the reference set on 2x H100: five all runs in separate processes with check,
# nvbandwidth v0.8 in the same hour, the probes, the GPU tests, and the renewal experiment.
set -u
W=/tmp/w; mkdir -p $W; P=$PWD/.gpu/p2pbench; G=$PWD/.gpu
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s -i 0 | head -3; $P --version; } > $W/machine.txt 2>&1
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
NVB=$!
(cd .peers/probes && for p in ipcprobe ipcprobe4 pullprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p $p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done)
for i in 1 2; do
  t all$i; /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "rc=$? $(cat $W/all$i.time)"; head -1 $W/all$i.trace
  $P check $W/all$i/results.json > $W/check$i.txt 2>&1; echo "check rc=$?"
done
wait $NVB; tail -1 $W/nvb-build.log
t nvbandwidth; /tmp/nvb/nvbandwidth -j > $W/nvbandwidth.json 2> $W/nvbandwidth.err; echo rc=$?
for i in 3 4 5; do
  t all$i; /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "rc=$? $(cat $W/all$i.time)"
  $P check $W/all$i/results.json > $W/check$i.txt 2>&1; echo "check rc=$?"
done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
t probes
/tmp/ipcprobe > $W/ipcprobe.txt 2>&1; /tmp/pullprobe > $W/pullprobe.txt 2>&1
for o in base bigalloc bigalloc,round2m; do /tmp/ipcprobe4 $o; done > $W/ipcprobe4.txt 2>&1; cat $W/ipcprobe4.txt
t renew; for r in default all; do for i in 1 2 3; do
  a=""; [ $r = all ] && a="--renew all"
  $P bw --tests sm_read,sm_write,ce_read,ce_write --size 64MiB --sizes 4B:4MiB:4 $a -o $W/renew-$r-$i.json > /dev/null 2>&1; echo "renew $r $i rc=$?"
done; done
t gpu-tests
for pkg in cuda nvml internal/measure bench ipc; do
  b=$(basename $pkg); (cd $pkg && timeout 200 $G/$b.test -test.v -test.run GPU) > $W/gputest-$b.txt 2>&1; echo "$pkg rc=$?"; grep -E "^--- FAIL|^FAIL|^ok|^PASS" $W/gputest-$b.txt | head -8
done
tar czf $OUT/call3.tgz -C $W .
