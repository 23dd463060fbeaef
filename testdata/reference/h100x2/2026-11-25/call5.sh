#!/usr/bin/env bash
# Call 5 (2026-11-25): the estimate against a run it was not fitted on, and the VMM/legacy GPU test with the counters.
set -u
W=/tmp/w; mkdir -p $W; P=$PWD/.gpu/p2pbench; G=$PWD/.gpu
/usr/bin/time -f "%e s wall" -o $W/all6.time env P2PBENCH_TRACE=1 $P all --dir $W/all6 > $W/all6.txt 2> $W/all6.trace; echo "rc=$? $(cat $W/all6.time)"; head -1 $W/all6.trace
(cd ipc && timeout 200 $G/ipc.test -test.v -test.run 'GPUVMMAgainstLegacy|GPUIPC$') > $W/gputest-ipc.txt 2>&1; echo "ipc rc=$?"; grep -E "^--- |predicted" $W/gputest-ipc.txt | head -20
tar czf $OUT/call5.tgz -C $W .
