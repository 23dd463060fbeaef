set -u
W=/tmp/wF2; mkdir -p $W
nvcc -O2 -arch=sm_90 -o /tmp/ctxprobe .peers/probes/ctxprobe.cu -lcuda > $W/nvcc.log 2>&1 || { head $W/nvcc.log; exit 1; }
/tmp/ctxprobe .peers/probes/copy.ptx 6 > $W/ctxprobe-a.txt 2>&1; cat $W/ctxprobe-a.txt
for i in 1 2 3 4; do /tmp/ctxprobe .peers/probes/copy.ptx 1 > $W/ctxprobe-p$i.txt 2>&1; cat $W/ctxprobe-p$i.txt; done
tar czf $OUT/callF2.tgz -C $W .
