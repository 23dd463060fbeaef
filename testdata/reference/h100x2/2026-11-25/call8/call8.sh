#!/usr/bin/env bash
# Call 8 (2026-11-25, second session): where all's time goes after the cuts; which renewal carries what differs between processes.
set -u
W=/tmp/w8; mkdir -p $W; P=$PWD/.gpu/p2pbench
nvidia-smi nvlink -e > $W/nvlink-e-before.txt 2>&1
for i in 1 2; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(cat $W/all$i.time)"; head -1 $W/all$i.trace | grep -o "estimated.*"
done
D=offset,streams,events
for i in 1 2 3; do
  for mode in default renewed; do
    R=$D; [ $mode = renewed ] && R=$D,modules,small
    $P bw --tests sm_read,sm_write,ce_read --size 64MiB --sizes 4B:1MiB:4 --renew $R -o $W/bw-$mode-$i.json > $W/bw-$mode-$i.txt 2>&1; echo "bw $mode $i rc=$?"
    $P lat --tests lat_pingpong,lat_copy --renew $R -o $W/lat-$mode-$i.json > $W/lat-$mode-$i.txt 2>&1; echo "lat $mode $i rc=$?"
  done
done
nvidia-smi nvlink -e > $W/nvlink-e-after.txt 2>&1
tar czf $OUT/call8.tgz -C $W .
