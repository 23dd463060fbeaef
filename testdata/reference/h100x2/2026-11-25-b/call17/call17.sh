#!/usr/bin/env bash
# Call 17: the chase beyond L2 on a fresh allocation every round, three processes.
set -u
W=/tmp/w17; mkdir -p $W; P=$PWD/.gpu/p2pbench
for i in 1 2 3 4; do $P lat --tests lat_chase -o $W/lat$i.json > $W/lat$i.txt 2>&1; echo "lat$i rc=$?"; done
tar czf $OUT/call17.tgz -C $W .
