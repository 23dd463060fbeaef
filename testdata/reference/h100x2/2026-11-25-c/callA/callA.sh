#!/usr/bin/env bash
# Call A (2026-11-25, third session): where the time of `all` goes (trace + CPU profile), with and without --samples 10; nvbandwidth (its CE and SM copies, host copies) in the same lease.
set -u
W=/tmp/wA; mkdir -p $W; P=$PWD/.gpu1/p2pbench
t() { echo "== $* ($(date +%T))"; }
{ nvidia-smi; nvidia-smi topo -m; nvidia-smi -q | grep -iE "serial|part number|vbios|product name" ; } > $W/smi.txt 2>&1
t build nvbandwidth; bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1; tail -1 $W/nvb-build.log
run() { n=$1; shift; /usr/bin/time -f "%e s wall" -o $W/$n.time env P2PBENCH_TRACE=1 P2PBENCH_CPUPROFILE=$W/$n.prof $P all --dir $W/$n "$@" > $W/$n.txt 2> $W/$n.trace; echo "$n rc=$? $(cat $W/$n.time) $(head -1 $W/$n.trace | grep -o 'estimated.*')"; }
t p2pbench; run a1; run a2 --samples 10; run a3; run a4 --samples 10
t nvbandwidth; /tmp/nvb/nvbandwidth -j -t device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce device_to_device_memcpy_read_sm device_to_device_memcpy_write_sm host_to_device_memcpy_ce device_to_host_memcpy_ce > $W/nvbandwidth.json 2> $W/nvbandwidth.err; echo nvb rc=$?
tar czf $OUT/callA.tgz -C $W .
t done
