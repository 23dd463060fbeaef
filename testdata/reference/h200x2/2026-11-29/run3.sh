#!/usr/bin/env bash
# Two-GPU lease (issue 42): readings before; GPU tests; five `all` runs each checked; nvbandwidth (all tests);
# readings after and after 60 s idle; the ten compares; report of run 1.
[ -d .gpu ] || tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; mkdir -p $W/logs
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 300 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" | tee -a $W/steps.txt; }
read_all() { python3 .probe/nvlink-fields.py > $W/fields-$1.json 2> $W/fields-$1.err; for f in -e -ec; do nvidia-smi nvlink $f > $W/nvlink$f-$1.txt 2>&1; done; }
nvidia-smi -q > $W/smi-q.txt 2>&1; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi nvlink -s > $W/nvlink-s.txt 2>&1
read_all before
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for i in 1 2 3 4 5; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.txt 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
wait $B
t nvbandwidth /tmp/nvb/nvbandwidth -j > $W/nvbandwidth-v0.8.json 2> $W/nvbandwidth.err
read_all after
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/logs/gpu-tests-$p.log 2>&1); done
sleep 60; read_all idle60
for i in 1 2 3 4; do for j in $(seq $((i+1)) 5); do t compare$i$j $G/p2pbench compare --fail-on-regression $W/all$i/results.json $W/all$j/results.json > $W/compare-$i-$j.txt 2>&1; done; done
t report $G/p2pbench report -o $W/report1.pdf $W/all1/results.json > $W/report1.log 2>&1
cat $W/steps.txt; grep -h -m1 VERDICT $W/check*.txt; grep -h "^  [A-Z]" $W/check1.txt | head -12; grep -h Flagged $W/compare-*.txt | sort | uniq -c
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
