#!/usr/bin/env bash
# Call AA (2026-11-25, fifth session): the first `all` on a fresh 2× GPU machine of the build that starts every
# device's context beside the discovery (the first device's kernels compiling on a thread of their own), then two more.
set -u
W=/tmp/wAA; mkdir -p $W; tar xzf .gpuz/one.tgz; P=$PWD/.gpu1/p2pbench
nvidia-smi -L > $W/machine.txt
for i in 1 2 3; do
  /usr/bin/time -f "%e s wall" -o $W/all$i.time env P2PBENCH_TRACE=1 $P all --dir $W/all$i > $W/all$i.txt 2> $W/all$i.trace
  echo "all$i rc=$? $(tail -1 $W/all$i.time) | $(grep -E 'start: the driver and|discovery and|  setup|warm-up|ipc: start|end: health|exit: clos|whole command' $W/all$i.trace | sed -E 's/trace: +//' | tr -s ' ' | tr '\n' ';')"
done
tar czf $OUT/callAA.tgz -C $W .
