#!/usr/bin/env bash
# Call P (2026-11-25, fourth session): two `all` runs of the final build (module loading through one helper, host faults bounded by free memory).
set -u
W=/tmp/wP; mkdir -p $W; P=$PWD/.gpu1/p2pbench
nvidia-smi -L > $W/machine.txt 2>&1
for i in 1 2; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time) $(grep -o 'estimated [0-9a-z]*' $W/all$i.trace | head -1)"
  $P check $W/all$i/results.json > $W/check$i.txt 2>/dev/null; echo "check$i rc=$? $(grep -m1 VERDICT $W/check$i.txt) $(grep -m1 -i 'bandwidth against' $W/check$i.txt | tr -s ' ')"
done
$P compare $W/all1/results.json $W/all2/results.json --fail-on-regression > $W/compare.txt 2>&1; echo "compare rc=$? $(grep -m1 Flagged $W/compare.txt)"
tar czf $OUT/callP.tgz -C $W .
