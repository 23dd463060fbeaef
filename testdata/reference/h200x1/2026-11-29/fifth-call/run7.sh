#!/usr/bin/env bash
# One-GPU lease: SM host copies both ways, the SMs split (A: main, one block per SM of half the SMs
# per direction) against one block per SM of every SM per direction (B), interleaved with nvbandwidth's
# SM host tests, three times each.
set -u
tar -xJf .gpuz2/exp.tar.xz -C /tmp
W=$OUT; mkdir -p $W
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 200 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
nvidia-smi -q > $W/smi-q.txt 2>&1
bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1
T=sm_host_bidir,sm_host_all_bidir,sm_h2d,sm_d2h,host_bidir
for i in 1 2 3; do
  t nvb$i /tmp/nvb/nvbandwidth -j -t host_to_device_bidirectional_memcpy_sm device_to_host_bidirectional_memcpy_sm host_to_device_memcpy_sm device_to_host_memcpy_sm host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce > $W/nvb$i.json 2> $W/nvb$i.err
  t a$i /tmp/exp/p2pbench-a bw --tests $T -o $W/a$i.json > $W/a$i.txt 2>&1
  t b$i /tmp/exp/p2pbench-b bw --tests $T -o $W/b$i.json > $W/b$i.txt 2>&1
done
cat $W/steps.txt
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
