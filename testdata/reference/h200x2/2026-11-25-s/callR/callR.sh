#!/usr/bin/env bash
# Call R (2026-11-25, fifth session): three `all` runs of the build with the JIT warmed beside the discovery, the children reaped in the background, the driver closed beside the run's end, back-to-back copies queued as issued unless host-bound, and the ping-pong and chase across processes in a green context a round; pullprobe and latchprobe beside them.
set -u
W=/tmp/wR; mkdir -p $W; P=$PWD/.gpu1/p2pbench
nvidia-smi -L > $W/machine.txt 2>&1
(for p in pullprobe latchprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p .peers/probes/$p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done) &
for i in 1 2 3; do
/usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time) $(grep -o 'estimated [0-9a-z]*' $W/all$i.trace | head -1)"
grep -E "start: the driver and|discovery and|setup|warm-up|stopping|exit:|whole" $W/all$i.trace | sed -E 's/trace: +//' | tr -s ' ' | tr '\n' ';'; echo
done
wait
/tmp/pullprobe > $W/pullprobe.txt 2>&1; head -4 $W/pullprobe.txt | cut -c1-330
/tmp/latchprobe > $W/latchprobe.txt 2>&1; cat $W/latchprobe.txt | cut -c1-300
tar czf $OUT/callR.tgz -C $W .
