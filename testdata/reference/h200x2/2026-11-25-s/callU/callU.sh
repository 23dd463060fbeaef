#!/usr/bin/env bash
# Call U (2026-11-25, fifth session): A/B of the end of a run on one machine: A (the build of 9db0d83) closes the
# driver at the end (the parent, and each child across processes), B (the same with those closes left out, never
# committed) leaves the contexts to the process's end. a0 first on the fresh machine, then alternating, three each.
set -u
W=/tmp/wU; mkdir -p $W; tar xzf .gpuz/ab.tgz
nvidia-smi -L > $W/machine.txt
for i in 0 1 2 3; do for v in b a; do
  [ $i = 0 ] && [ $v = b ] && continue
  P=$PWD/.gpu1/p2pbench; [ $v = b ] && P=$PWD/.gpu1/p2pbench-b
  /usr/bin/time -f "%e s wall" -o $W/$v$i.time env P2PBENCH_TRACE=1 $P all --dir $W/$v$i > $W/$v$i.txt 2> $W/$v$i.trace
  sleep 1
done; done
tar czf $OUT/callU.tgz -C $W .
