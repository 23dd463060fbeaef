#!/usr/bin/env bash
set -u
cd .probe && nvcc -O2 -o /tmp/hbp hostbidirprobe.cu > $OUT/build.log 2>&1 || { cat $OUT/build.log; exit 1; }
/tmp/hbp 4 | tee $OUT/hostbidirprobe-n4.txt
/tmp/hbp 16 > $OUT/hostbidirprobe-n16.txt; cat $OUT/hostbidirprobe-n16.txt
