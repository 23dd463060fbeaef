#!/usr/bin/env bash
# One-GPU lease: host copies, p2pbench beside nvbandwidth beside a plain long measurement, interleaved; NUMA layout.
[ -d .gpu ] || tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W/probes
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
(lscpu; echo; numactl -H; echo; nvidia-smi topo -m; echo; cat /sys/bus/pci/devices/*/numa_node 2>/dev/null | sort | uniq -c) > $W/numa.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
nvcc -O2 -arch=sm_90 -o /tmp/hostprobe tools/probes/hostprobe.cu > $W/probes/nvcc.log 2>&1 || echo nvcc failed
wait $B
for i in 1 2 3; do
  t probe$i /tmp/hostprobe 0 > $W/probes/hostprobe-$i.txt 2>&1
  t nvb-h2d$i /tmp/nvb/nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce -j > $W/probes/nvb-$i.json 2>&1
  t bw$i $G/p2pbench bw --tests h2d,d2h --sizes none -o $W/probes/bw-$i.json > $W/probes/bw-$i.log 2>&1
done
t nvb-h2d-nvloop /tmp/nvb/nvbandwidth -t host_to_device_memcpy_ce device_to_host_memcpy_ce -i 10 -j > $W/probes/nvb-i10.json 2>&1
cat $W/steps.txt; grep -h "median\|extra" $W/probes/hostprobe-*.txt | grep "N=64\|extra"
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
