#!/usr/bin/env bash
# Call H0 (2026-11-25, fourth session): the copy kernels with in-kernel repetitions on the GPU — the self-test's correctness checks (every entry, 0 and 3 reps) and SM pulls at 512 MiB.
set -u
W=/tmp/wH0; mkdir -p $W; P=$PWD/.gpu/p2pbench
timeout 240 python3 tools/kernel-selftest/selftest.py --quick > $W/selftest-quick.txt 2>&1; echo "selftest --quick rc=$?"; tail -5 $W/selftest-quick.txt
$P bw --tests sm_read,sm_write,ce_read --sizes none -o $W/bw-sm.json > $W/bw-sm.txt 2>&1; echo "bw rc=$?"; grep -E "sm_read|sm_write|ce_read|SM|read|write" $W/bw-sm.txt | head -20
tar czf $OUT/callH0.tgz -C $W .
