#!/usr/bin/env bash
# Call 15: the busy-helper GPU test after its stdin hold, the kernel self-test from its new place.
set -u
W=/tmp/w15; mkdir -p $W
(cd bench && ../.gpu/bench.test -test.v -test.run 'Watch|Busy') > $W/bench-watch.txt 2>&1; echo "bench watch rc=$?"; grep -E "^--- " $W/bench-watch.txt
(timeout 240 python3 tools/kernel-selftest/selftest.py --quick) > $W/selftest.txt 2>&1; echo "selftest rc=$?"; tail -5 $W/selftest.txt
tar czf $OUT/call15.tgz -C $W .
