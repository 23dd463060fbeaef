#!/usr/bin/env bash
# One-GPU lease: readings, GPU tests, three `all` runs each checked, compares, nvbandwidth, readings after.
[ -d .gpu ] || tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" | tee -a $W/steps.txt; }
nvidia-smi -q > $W/smi-q.txt 2>&1; nvidia-smi topo -m > $W/topo.txt 2>&1
python3 .probe/nvlink-fields.py > $W/fields-before.json 2> $W/fields-before.err
for f in -s -e -ec; do nvidia-smi nvlink $f > $W/nvlink$f-before.txt 2>&1; done
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/gpu-tests-$p.log 2>&1); done
wait $B
for i in 1 2 3; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.log 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
for a in 1 2; do for b in 2 3; do [ $a -lt $b ] && t compare$a$b $G/p2pbench compare --fail-on-regression $W/all$a/results.json $W/all$b/results.json > $W/compare$a$b.txt 2>&1; done; done
t nvbandwidth /tmp/nvb/nvbandwidth -j > $W/nvbandwidth.json 2> $W/nvbandwidth.err
python3 .probe/nvlink-fields.py > $W/fields-after.json 2> $W/fields-after.err
for f in -e -ec; do nvidia-smi nvlink $f > $W/nvlink$f-after.txt 2>&1; done
t report $G/p2pbench report -o $W/report1.pdf $W/all1/results.json > $W/report1.log 2>&1
cat $W/steps.txt; for f in $W/gpu-tests-*.log; do tail -n 3 $f; done; grep -m3 VERDICT $W/check*.txt
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
