#!/usr/bin/env bash
# One-GPU lease: main's build at the session's end (after cmd/p2pbench's command line moved to
# internal/cmdline, interrupt, progress, cpuprofile): GPU tests, two `all` runs each checked and
# compared with each other and with the sixth call's (the previous build), a real run stopped by
# SIGINT and by SIGTERM (partial results kept, exit 130/143), bad command lines, plot/report of a
# real run, nvbandwidth's host and local tests beside them.
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
G=$PWD/.gpu; W=$OUT; P=testdata/reference/h200x1/2026-11-29/sixth-call; mkdir -p $W/logs
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 240 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
nvidia-smi -q > $W/smi-q.txt 2>&1
(bash .peers/nvbandwidth-on-device.sh > $W/nvb-build.log 2>&1) &
B=$!
for p in cuda nvml measure bench ipc; do (cd $p && t test-$p $G/$p.test -test.v -test.run GPU > $W/logs/gpu-tests-$p.log 2>&1); done
for i in 1 2; do
  t all$i $G/p2pbench all --dir $W/all$i > $W/all$i.txt 2>&1
  t check$i $G/p2pbench check $W/all$i/results.json > $W/check$i.txt 2>&1
done
t compare12 $G/p2pbench compare --fail-on-regression $W/all1/results.json $W/all2/results.json > $W/compare12.txt 2>&1
t compare-prev $G/p2pbench compare --fail-on-regression $P/all1/results.json.gz $P/all2/results.json.gz -- $W/all1/results.json $W/all2/results.json > $W/compare-prev.txt 2>&1
# Stopped by a signal part-way: the run saves what it measured, marked partial, and exits 128+n.
for s in INT TERM; do
  $G/p2pbench all --dir $W/stop-$s > $W/stop-$s.txt 2>&1 & pid=$!
  sleep 1.5; kill -$s $pid; wait $pid; echo "stop-$s rc=$?" >> $W/steps.txt
  $G/p2pbench show $W/stop-$s/results.json > $W/stop-$s-show.txt 2>&1; echo "stop-$s-show rc=$?" >> $W/steps.txt
done
# Bad command lines: one line, exit 2, nothing measured.
for a in "bw --samples 0x2" "bw --rounds 2 --rounds 3" "report $W/all1/results.json -o" "lat extra" "bw --size 1e3" "compare $W/all1/results.json"; do
  $G/p2pbench $a > /dev/null 2>> $W/badargs.txt; echo "badargs '$a' rc=$?" >> $W/steps.txt
done
t plot $G/p2pbench plot $W/all1/results.json -o $W/plots > $W/plot.txt 2>&1
t report $G/p2pbench report $W/all1/results.json -o $W/report.pdf > $W/report.txt 2>&1
wait $B
t nvbandwidth /tmp/nvb/nvbandwidth -j -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy host_to_device_memcpy_sm device_to_host_memcpy_sm > $W/nvbandwidth.json 2> $W/nvbandwidth.err
cat $W/steps.txt | tr '\n' ' '; echo; for f in $W/logs/gpu-tests-*.log; do tail -n 1 $f; grep -c -- "--- PASS" $f; grep -c -- "--- FAIL" $f; done; grep -h -m1 "VERDICT" $W/check*.txt; grep -h -m1 "Flagged\|regress" $W/compare*.txt; cat $W/badargs.txt; grep -h -m2 "partial\|INCOMPLETE" $W/stop-*-show.txt
rm -rf $W/plots
cd $W && for d in all1 all2 stop-INT stop-TERM; do gzip -9 $d/results.json 2>/dev/null; done; tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
