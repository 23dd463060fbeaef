#!/usr/bin/env bash
set -u
cd .probe && nvcc -O2 -arch=sm_90 -o /tmp/shb smhostbidirprobe.cu > $OUT/build.log 2>&1 || { cat $OUT/build.log; exit 1; }
/tmp/shb | tee $OUT/smhostbidirprobe-1.txt
/tmp/shb > $OUT/smhostbidirprobe-2.txt; cat $OUT/smhostbidirprobe-2.txt
