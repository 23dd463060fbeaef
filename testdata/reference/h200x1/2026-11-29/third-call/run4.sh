#!/usr/bin/env bash
# One-GPU lease: GPU tests, three `all` runs each checked, compares among them and against the previous build's runs, nvbandwidth.
[ -d .gpu ] || tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; P=testdata/reference/h200x1/2026-11-29/second-call
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" | tee -a $W/steps.txt; }
nvidia-smi -q > $W/smi-q.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/gpu-tests-$p.log 2>&1); done
wait $B
for i in 1 2 3; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.log 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
for a in 1 2; do for b in 2 3; do [ $a -lt $b ] && t compare$a$b $G/p2pbench compare --fail-on-regression $W/all$a/results.json $W/all$b/results.json > $W/compare$a$b.txt 2>&1; done; done
for i in 1 2 3; do zcat $P/all$i.json.gz > /tmp/prev$i.json; t compare-prev$i $G/p2pbench compare --fail-on-regression /tmp/prev$i.json $W/all$i/results.json > $W/compare-prev$i.txt 2>&1; done
t nvbandwidth /tmp/nvb/nvbandwidth -j > $W/nvbandwidth.json 2> $W/nvbandwidth.err
cat $W/steps.txt; for f in $W/gpu-tests-*.log; do tail -n 2 $f; done; grep -h -m2 "VERDICT\|Flagged" $W/check*.txt $W/compare*.txt
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
