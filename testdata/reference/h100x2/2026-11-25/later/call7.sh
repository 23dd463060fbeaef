#!/usr/bin/env bash
# Call 7 (2026-11-25): one all run, its estimate against its duration (the estimate fitted on calls 4-6).
set -u
W=/tmp/w; mkdir -p $W; P=$PWD/.gpu/p2pbench
for i in 9; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "rc=$? $(cat $W/all$i.time)"; head -1 $W/all$i.trace | grep -o "estimated.*"; grep "NVLink counter\|whole run" $W/all$i.trace
done
tar czf $OUT/call7.tgz -C $W .
