#!/usr/bin/env bash
# Runs on a GPU machine with ONE GPU, from the repository root, with the bundle of
# `make gpu` in .gpu/: the GPU tests that run on one device, `all` twice and
# `check`, the busy-GPU refusal with a second process holding GPU memory, and five
# separate processes of `atomic` and of the local latency tests (how much a figure
# moves from process to process). Everything goes to $OUT/onedev.tgz.
set -u
OUT=${OUT:-$PWD/gpu-out}
G=$PWD/.gpu
W=/tmp/p2pwork
mkdir -p "$W" "$OUT"
step() { echo "=== $* ==="; local t0=$(date +%s%N); timeout "${TIMEOUT:-300}" "$@"; local rc=$?; echo "[rc=$rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms]"; return 0; }
{
	nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
	for p in cuda nvml internal/measure bench ipc; do
		b=$(basename "$p")
		(cd "$p" && step "$G/$b.test" -test.v -test.run GPU) > "$W/$b-gpu-tests.log" 2>&1
		grep -E '^(--- |ok|FAIL|PASS)' "$W/$b-gpu-tests.log"
	done
	for i in 1 2; do
		step "$G/p2pbench" all --dir "$W/all$i" > "$W/all$i.txt" 2> "$W/all$i.err"
		tail -3 "$W/all$i.err"
	done
	step "$G/p2pbench" check "$W/all1/results.json" > "$W/check.txt" 2>&1
	head -25 "$W/check.txt"
	# Another program on the GPU: refused by default, marked with --allow-busy.
	python3 -c 'import torch, time; x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); time.sleep(40)' &
	hold=$!
	sleep 10
	step "$G/p2pbench" bw --tests h2d,local_copy --samples 5 -o "$W/busy-refused.json" > "$W/busy-refused.txt" 2>&1
	tail -3 "$W/busy-refused.txt"
	step "$G/p2pbench" bw --tests h2d,local_copy --samples 5 --allow-busy -o "$W/busy-allowed.json" > "$W/busy-allowed.txt" 2>&1
	tail -3 "$W/busy-allowed.txt"
	kill $hold; wait $hold 2>/dev/null
	for i in 1 2 3 4 5; do
		step "$G/p2pbench" atomic -o "$W/atomic$i.json" > /dev/null 2>&1
		step "$G/p2pbench" lat --tests lat_chase,lat_host_chase -o "$W/lat$i.json" > /dev/null 2>&1
		step "$G/p2pbench" bw --tests h2d,d2h,local_copy,sm_h2d,sm_d2h --size 64KiB -o "$W/small$i.json" > /dev/null 2>&1
	done
} 2>&1 | tee "$W/onedev.log"
tar czf "$OUT/onedev.tgz" -C "$W" .
