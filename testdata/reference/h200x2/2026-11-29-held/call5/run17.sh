#!/usr/bin/env bash
# Two-GPU lease: the session's last build (main after 9b75f21), five `all` runs in separate processes, each
# checked, and the ten pairwise compares with --fail-on-regression: is the gate quiet on one machine with the
# held host copies both ways?
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 300 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
for i in 1 2 3 4 5; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.txt 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
for i in 1 2 3 4; do for j in $(seq $((i+1)) 5); do t compare$i$j $G/p2pbench compare --fail-on-regression $W/all$i/results.json $W/all$j/results.json > $W/compare-$i-$j.txt 2>&1; done; done
t compare-3v2 $G/p2pbench compare --fail-on-regression $W/all1/results.json $W/all2/results.json $W/all3/results.json -- $W/all4/results.json $W/all5/results.json > $W/compare-123-45.txt 2>&1
cat $W/steps.txt | tr '\n' ' '; echo; grep -h -m1 VERDICT $W/check*.txt | sort | uniq -c; grep -h Flagged $W/compare-*.txt | sort | uniq -c; grep -h -A3 "^Flagged: [1-9]\|^Flagged: 0 regressions and [1-9]" $W/compare-*.txt | grep "^  " | head -20
cd $W && for d in all1 all2 all3 all4 all5; do gzip -9 $d/results.json; done; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
