#!/usr/bin/env bash
# Call D (2026-11-25, third session): p2pbench 5b72164, the cost model read off call C — five `all` runs in separate processes, each checked, with nvbandwidth v0.8 in the same lease.
set -u
W=/tmp/wD; mkdir -p $W/probes; P=$PWD/.gpu1/p2pbench
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | grep -iE "serial|part number|vbios|product name" ; } > $W/machine.txt 2>&1
t build; (bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
wait; tail -1 $W/nvb-build.log
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
t all
for i in 1 2 3 4 5; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time) $(grep -o 'estimated [0-9a-z]*' $W/all$i.trace)"
  $P check $W/all$i/results.json > $W/check$i.txt 2>/dev/null; echo "check$i rc=$? $(grep -m1 VERDICT $W/check$i.txt)"
done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
t nvbandwidth; /tmp/nvb/nvbandwidth -j > $W/nvbandwidth-v0.8.json 2> $W/nvbandwidth.err; echo nvb rc=$?
cp /tmp/nvb/build/CMakeCache.txt $W/nvb-cmakecache.txt 2>/dev/null
tar czf $OUT/callD.tgz -C $W .
t done
