#!/usr/bin/env bash
# Call AG (2026-11-26, sixth session): a second set of p2pbench HEAD on another fresh 2x H200: five `all` runs
# in separate processes (the first on the fresh machine, alone), each checked; nvbandwidth v0.8 and the plain
# probes (pullprobe, ipcprobe) in the same lease.
set -u
W=/tmp/wAG; mkdir -p $W/probes $W/gpu-tests
tar xzf .gpuz/gpu.tgz; P=$PWD/.gpu/p2pbench; G=$PWD/.gpu
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | grep -iE "serial|part number|vbios|product name|driver version|cuda version"; } > $W/machine.txt 2>&1
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
one() {
  /usr/bin/time -f "%e s wall" -o $W/all$1.time env P2PBENCH_TRACE=1 $P all --dir $W/all$1 > $W/all$1.txt 2> $W/all$1.trace; echo "all$1 rc=$? $(tail -1 $W/all$1.time) $(grep -o 'estimated [0-9a-z]*' $W/all$1.trace | head -1)"
  $P check $W/all$1/results.json > $W/check$1.txt 2>/dev/null; echo "check$1 rc=$? $(grep -m1 VERDICT $W/check$1.txt)"
}
t all1; one 1
t build
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
for p in ipcprobe pullprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p .peers/probes/$p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done
wait; tail -1 $W/nvb-build.log
t probes
for p in pullprobe ipcprobe; do timeout 120 /tmp/$p > $W/probes/$p.txt 2>&1; echo "$p rc=$?"; done
t runs; for i in 2 3 4 5; do one $i; done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
t nvbandwidth; timeout 200 /tmp/nvb/nvbandwidth -j > $W/nvbandwidth-v0.8.json 2> $W/nvbandwidth.err; echo nvb rc=$?
$P check $W/all1/results.json --format prometheus > $W/metrics1.prom 2>/dev/null; $P check $W/all1/results.json --format junit > $W/junit1.xml 2>/dev/null
for d in all1 all2 all3 all4 all5; do [ -f $W/$d/results.json ] && gzip -c $W/$d/results.json > $W/$d.json.gz; rm -rf $W/$d; done
tar czf $OUT/callAG.tgz -C $W .
t done
