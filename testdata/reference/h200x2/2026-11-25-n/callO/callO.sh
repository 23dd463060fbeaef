#!/usr/bin/env bash
# Call O (2026-11-25, fourth session): three `all` runs of the cold-start changes (modules preloaded in the warm-up, host regions faulted in beside the discovery), the first on the fresh VM.
set -u
W=/tmp/wO; mkdir -p $W; P=$PWD/.gpu1/p2pbench
nvidia-smi -L > $W/machine.txt 2>&1
for i in 1 2 3; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time) $(grep -o 'estimated [0-9a-z]*' $W/all$i.trace | head -1)"
  grep -E "start: the driver and|discovery and|setup|warm-up" $W/all$i.trace | tr -s ' ' | tr '\n' ';'; echo
done
tar czf $OUT/callO.tgz -C $W .
