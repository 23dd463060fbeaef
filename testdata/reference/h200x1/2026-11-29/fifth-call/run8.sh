#!/usr/bin/env bash
# One-GPU lease: SM host copies both ways by kernel variant, the SMs split (A: main) or each direction on every SM (B).
set -u
tar -xJf .gpuz2/exp.tar.xz -C /tmp
W=$OUT; mkdir -p $W
t() { local n=$1; shift; local t0=$(date +%s%N); timeout 200 "$@"; local rc=$?; echo "$n rc=$rc ms=$(( ($(date +%s%N)-t0)/1000000 ))" >> $W/steps.txt; }
for r in 1 2; do for v in v4_u1 v4_u4 v4_u8 cg_u4 cs_u4 warp_u8 bulk; do for w in a b; do
  t $w-$v-$r /tmp/exp/p2pbench-$w bw --tests sm_host_bidir,sm_h2d,sm_d2h --variant $v --samples 9 --rounds 3 -o $W/$w-$v-$r.json > $W/$w-$v-$r.txt 2>&1
done; done; done
cat $W/steps.txt | tr '\n' ' '
cd $W && tar -czf /tmp/run.tgz . && rm -rf $W/* && mv /tmp/run.tgz $W/
