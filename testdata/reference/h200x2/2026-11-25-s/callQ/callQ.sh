#!/usr/bin/env bash
# Call Q (2026-11-25, fifth session): where the time of a cold and a warm `all` goes (new trace points: the
# children's stop, the driver's close, the whole command), and 4-byte pulls back to back by way of queueing
# (b2bprobe: primary vs green contexts, cuMemcpyPeerAsync vs cuMemcpyAsync) beside pullprobe.
set -u
W=/tmp/wQ; mkdir -p $W; P=$PWD/.gpu1/p2pbench
nvidia-smi -L > $W/machine.txt 2>&1
(for p in pullprobe b2bprobe; do nvcc -O2 -arch=sm_90 -o /tmp/$p .peers/probes/$p.cu -lcuda > $W/nvcc-$p.log 2>&1 || echo "nvcc $p failed"; done) &
/usr/bin/time -f "%e s wall" -o $W/all1.time env P2PBENCH_TRACE=1 $P all --dir $W/all1 > $W/all1.txt 2> $W/all1.trace; echo "all1 rc=$? $(tail -1 $W/all1.time)"
wait
/tmp/pullprobe > $W/pullprobe.txt 2>&1; head -4 $W/pullprobe.txt | cut -c1-200
/tmp/b2bprobe > $W/b2bprobe.txt 2>&1; cat $W/b2bprobe.txt
for i in 2 3; do
/usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace; echo "all$i rc=$? $(tail -1 $W/all$i.time)"
done
/tmp/pullprobe > $W/pullprobe2.txt 2>&1; head -4 $W/pullprobe2.txt | cut -c1-200
for i in 1 2 3; do grep -vE "round [0-9] of" $W/all$i.trace | grep -v "^p2pbench: plan" | sed -E 's/trace: +//' | tr '\n' ';' | cut -c1-1500; echo; done
tar czf $OUT/callQ.tgz -C $W .
