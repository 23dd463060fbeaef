#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with the bundle of
# `make gpu` in .gpu/. Usage: scripts/gpu-run.sh PHASE... (topo, validate, tests,
# all, tune, ipctest, sanitize, wire, ipc). Logs and results go to $OUT (or ./gpu-out).
set -u
OUT=${OUT:-$PWD/gpu-out}
G=$PWD/.gpu
W=/tmp/p2pwork
mkdir -p "$W" "$OUT"
log() { echo; echo "=== $* ==="; }
run() { log "$*"; local t0=$(date +%s%N); timeout "${TIMEOUT:-300}" "$@"; local rc=$?; echo "[rc=$rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms]"; return $rc; }

for phase in "$@"; do
case $phase in
topo)
	run "$G/p2pbench" topo --check -o "$W/topo.json" > "$W/topo.log" 2>&1; tail -3 "$W/topo.log"
	;;
validate)
	run nvidia-smi
	run nvidia-smi topo -m
	run nvidia-smi nvlink -s -i 0
	run bash kernels/check_ptx.sh > "$W/ptxas.log" 2>&1; tail -5 "$W/ptxas.log"
	run "$G/p2pbench" topo
	run "$G/p2pbench" topo --check -o "$W/topo.json"
	;;
tests)
	(cd cuda && run "$G/cuda.test" -test.v -test.run GPU) > "$W/cuda-gpu-tests.log" 2>&1; tail -15 "$W/cuda-gpu-tests.log"
	(cd nvml && run "$G/nvml.test" -test.v -test.run GPU) > "$W/nvml-gpu-tests.log" 2>&1; tail -8 "$W/nvml-gpu-tests.log"
	(cd measure && run "$G/measure.test" -test.v -test.run GPU) > "$W/measure-gpu-tests.log" 2>&1; tail -5 "$W/measure-gpu-tests.log"
	(cd bench && run "$G/bench.test" -test.v -test.run GPU) > "$W/bench-gpu-tests.log" 2>&1; tail -15 "$W/bench-gpu-tests.log"
	(cd ipc && run "$G/ipc.test" -test.v -test.run GPU) > "$W/ipc-gpu-tests.log" 2>&1; tail -15 "$W/ipc-gpu-tests.log"
	;;
all)
	P2PBENCH_TRACE=1 run "$G/p2pbench" all --dir "$W/all1" > "$W/all1.log" 2> "$W/all1.trace"; grep -A40 "==== Summary" "$W/all1.log"; sort -t: -k2 -rn "$W/all1.trace" | head -25
	run "$G/p2pbench" all --dir "$W/all2" > "$W/all2.log" 2>&1; tail -4 "$W/all2.log"
	;;
tune)
	run "$G/p2pbench" bw --tune --tests sm_read,sm_write,sm_bidir --size 512MiB -o "$W/tune1.json" > "$W/tune1.log" 2>&1; tail -3 "$W/tune1.log"
	run "$G/p2pbench" bw --tests sm_read,sm_write,sm_bidir --size 2GiB -o "$W/sm2g.json" > "$W/sm2g.log" 2>&1; head -30 "$W/sm2g.log"
	;;
ipctest)
	(cd ipc && run "$G/ipc.test" -test.v -test.run 'GPUIPC') > "$W/ipc-gpu-tests.log" 2>&1; grep -E "^(--- |ok|FAIL|PASS)" "$W/ipc-gpu-tests.log"
	;;
sanitize)
	for v in ${VARIANTS:-v4_u4 warp_u8 bulk cs_u8}; do
		echo "--- $v"
		timeout 120 compute-sanitizer --tool memcheck --print-limit 5 "$G/p2pbench" bw --tests sm_read,sm_write --size 4MiB --samples 2 --variant "$v" > "$W/sanitize-$v.log" 2>&1
		echo "rc=$? $(grep -E 'ERROR SUMMARY|error' "$W/sanitize-$v.log" | tail -2)"
	done
	;;
wire)
	# SM and CE at 2 GiB and 8 GiB with the NVLink counters (results carry link_traffic).
	for sz in 2GiB 8GiB; do
		run "$G/p2pbench" bw --tests ce_read,ce_write,ce_bidir,sm_read,sm_write,sm_bidir --size $sz --sizes none -o "$W/wire-$sz.json" > "$W/wire-$sz.log" 2>&1
		grep -A14 "On the wire" "$W/wire-$sz.log"
	done
	;;
ipc)
	run "$G/p2pbench" ipc -o "$W/ipc.json" > "$W/ipc.log" 2>&1; tail -40 "$W/ipc.log"
	;;
esac
done
tar czf "$OUT/work.tgz" -C "$W" . 2>/dev/null
cp "$W"/all1/results.json "$OUT/all1.json" 2>/dev/null
cp "$W"/all2/results.json "$OUT/all2.json" 2>/dev/null
cp "$W"/wire-*.json "$OUT/" 2>/dev/null
ls -la "$OUT"
