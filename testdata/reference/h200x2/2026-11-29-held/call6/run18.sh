#!/usr/bin/env bash
# Two-GPU lease: the session's last build (main 149e683): the host
# tests both ways three times, nvbandwidth's host tests both ways between them, the probe's held and equal
# timings (tools/probes/hostbidirprobe.cu, 4 copies a window).
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 300 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
(cd .probe && nvcc -O2 -arch=sm_90 -o /tmp/hbp hostbidirprobe.cu > $W/probe-build.log 2>&1)
T=host_all_bidir,sm_host_all_bidir,host_bidir,host_to_all,all_to_host
t host1 $G/p2pbench bw --tests $T --sizes none -o $W/host1.json > $W/host1.txt 2>&1
wait $B
t nvbandwidth1 /tmp/nvb/nvbandwidth -j -t host_to_all_bidirectional_memcpy_ce all_to_host_bidirectional_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce > $W/nvbandwidth1.json 2> $W/nvbandwidth1.err
t host2 $G/p2pbench bw --tests $T --sizes none -o $W/host2.json > $W/host2.txt 2>&1
t probe4 /tmp/hbp 4 > $W/hostbidirprobe-n4.txt 2>&1
t nvbandwidth2 /tmp/nvb/nvbandwidth -j -t host_to_all_bidirectional_memcpy_ce all_to_host_bidirectional_memcpy_ce > $W/nvbandwidth2.json 2> $W/nvbandwidth2.err
t host3 $G/p2pbench bw --tests $T --sizes none -o $W/host3.json > $W/host3.txt 2>&1
cat $W/steps.txt | tr '\n' ' '; echo; grep -E "^(equal|held)" $W/hostbidirprobe-n4.txt
cd $W && gzip -9 host*.json; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
