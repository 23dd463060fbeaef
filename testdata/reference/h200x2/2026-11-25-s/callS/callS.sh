#!/usr/bin/env bash
# Call S (2026-11-25, fifth session): what sets a GPU-to-GPU ping-pong's time (flag placement, SM), in three processes.
set -u
W=/tmp/wS; mkdir -p $W
nvidia-smi -L > $W/machine.txt 2>&1
nvcc -O2 -arch=sm_90 -o /tmp/pingprobe .peers/probes/pingprobe.cu > $W/nvcc.log 2>&1 || { echo nvcc failed; cat $W/nvcc.log; }
for i in 1 2 3; do timeout 60 /tmp/pingprobe > $W/pingprobe$i.txt 2>&1; echo "rc=$?"; cat $W/pingprobe$i.txt; done
tar czf $OUT/callS.tgz -C $W .
P=$PWD/.gpu1/p2pbench
for i in 1 2; do
/usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time)"
grep -E "start: the driver and|discovery and|setup|warm-up|ipc: start|stopping|\"time\" in the first|exit:|whole" $W/all$i.trace | sed -E 's/trace: +//' | tr -s ' ' | tr '\n' ';'; echo
done
tar czf $OUT/callS.tgz -C $W .
