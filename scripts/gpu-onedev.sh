#!/usr/bin/env bash
# Runs on a GPU machine with ONE GPU, from the repository root, with the bundle of
# `make gpu` in .gpu/. Usage: scripts/gpu-onedev.sh PHASE... with phases
#   tests   the GPU tests that run on one device (cuda, nvml, measure, bench, ipc)
#   all5    `all` five times in separate processes, `check` of each, every pairwise compare
#           with --fail-on-regression and the runs grouped 2 against 3
#   busy    the busy-GPU refusal and --allow-busy with a second process holding GPU memory
#   ipcvmm  `ipc --handles legacy,vmm` twice and their compare
#   mnnvl   the multi-node preflight on real hardware: two ranks on this node
#   spread  five processes each of atomic, the local latency tests and small host copies,
#           with scripts/spread.py on each set (the runs' spread beside their rounds')
#   renew   which state a process keeps, on one device: five processes of small host and local
#           copies for each --renew setting, scripts/spread.py on each
#   probe   the per-process modes of the same-GPU IPC copies (six processes, legacy and VMM
#           handles) and SM host copies both ways by kernel variant and grid
#   sens    sensitivity on one device: h2d of all run 1 2% slower at 512 MiB, the local copy and
#           d2h of small run 1 10% slower at 64 KiB, each compared with run 2; an SM host copy with
#           --blocks-per-sm 1 against the default grid (after all5, spread)
# Everything goes to $OUT/onedev.tgz; the log to $OUT/onedev.log.
set -u
OUT=${OUT:-$PWD/gpu-out}
G=$PWD/.gpu
W=/tmp/p2pwork
mkdir -p "$W" "$OUT"
step() { echo "=== $* ==="; local t0=$(date +%s%N); timeout "${TIMEOUT:-300}" "$@"; local rc=$?; echo "[rc=$rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms]"; return 0; }
phase_tests() {
	nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
	for p in cuda nvml measure bench ipc; do
		b=$(basename "$p")
		(cd "$p" && step "$G/$b.test" -test.v -test.run GPU) > "$W/$b-gpu-tests.log" 2>&1
		grep -E '^(--- |ok|FAIL|PASS)' "$W/$b-gpu-tests.log"
	done
}
phase_all5() {
	for i in 1 2 3 4 5; do
		step "$G/p2pbench" all --dir "$W/all$i" > "$W/all$i.txt" 2> "$W/all$i.err"
		tail -2 "$W/all$i.err"
		"$G/p2pbench" check "$W/all$i/results.json" > "$W/check$i.txt" 2>&1; echo "check $i: rc=$? $(grep -m1 VERDICT "$W/check$i.txt")"
	done
	for i in 1 2 3 4 5; do for j in 1 2 3 4 5; do
		[ "$i" -lt "$j" ] || continue
		"$G/p2pbench" compare --fail-on-regression "$W/all$i/results.json" "$W/all$j/results.json" > "$W/compare-$i-$j.txt" 2>&1
		echo "compare $i $j: rc=$? $(tail -1 "$W/compare-$i-$j.txt")"
	done; done
	"$G/p2pbench" compare --fail-on-regression "$W/all1/results.json" "$W/all2/results.json" -- "$W/all3/results.json" "$W/all4/results.json" "$W/all5/results.json" > "$W/compare-2v3.txt" 2>&1
	echo "compare 2 vs 3: rc=$? $(tail -1 "$W/compare-2v3.txt")"
}
phase_busy() {
	python3 -c 'import torch, time; x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); time.sleep(40)' &
	local hold=$!
	sleep 10
	step "$G/p2pbench" bw --tests h2d,local_copy --samples 5 -o "$W/busy-refused.json" > "$W/busy-refused.txt" 2>&1
	tail -2 "$W/busy-refused.txt"
	step "$G/p2pbench" bw --tests h2d,local_copy --samples 5 --allow-busy -o "$W/busy-allowed.json" > "$W/busy-allowed.txt" 2>&1
	kill $hold; wait $hold 2>/dev/null
}
phase_ipcvmm() {
	for i in 1 2; do
		step "$G/p2pbench" ipc --handles legacy,vmm -o "$W/ipc-vmm-$i.json" > "$W/ipc-vmm-$i.txt" 2>&1
	done
	"$G/p2pbench" compare "$W/ipc-vmm-1.json" "$W/ipc-vmm-2.json" > "$W/compare-ipc-vmm.txt" 2>&1; tail -1 "$W/compare-ipc-vmm.txt"
}
phase_mnnvl() {
	"$G/p2pbench" mnnvl --rank 0 --ranks 2 --rendezvous 127.0.0.1:29500 --rendezvous-wait 20s > "$W/mnnvl0.txt" 2>&1 &
	local r0=$!
	"$G/p2pbench" mnnvl --rank 1 --ranks 2 --rendezvous 127.0.0.1:29500 --rendezvous-wait 20s > "$W/mnnvl1.txt" 2>&1
	echo "mnnvl rank 1: rc=$?"; wait $r0; echo "mnnvl rank 0: rc=$?"
	cat "$W/mnnvl0.txt" "$W/mnnvl1.txt"
}
phase_spread() {
	for i in 1 2 3 4 5; do
		step "$G/p2pbench" atomic -o "$W/atomic$i.json" > /dev/null 2>&1
		step "$G/p2pbench" lat --tests lat_chase,lat_host_chase -o "$W/lat$i.json" > /dev/null 2>&1
		step "$G/p2pbench" bw --tests h2d,d2h,local_copy,sm_h2d,sm_d2h --size 64KiB -o "$W/small$i.json" > /dev/null 2>&1
	done
	for k in atomic lat small; do
		echo "--- spread of $k"
		python3 scripts/spread.py "$W/$k"[1-5].json --top 12
	done
}
phase_renew() {
	for r in none offset alloc streams events offset,streams,events all; do
		local d="$W/renew-${r//,/+}"
		mkdir -p "$d"
		for i in 1 2 3 4 5; do
			step "$G/p2pbench" bw --renew "$r" --tests h2d,d2h,local_copy,sm_h2d,sm_d2h --size 64KiB -o "$d/run$i.json" > /dev/null 2>&1
		done
		echo "--- spread, --renew $r"
		python3 scripts/spread.py "$d"/run[1-5].json --top 8
	done
}
phase_probe() {
	local d="$W/probe"
	mkdir -p "$d"
	for i in 1 2 3 4 5 6; do
		step "$G/p2pbench" ipc --tests ipc_ce_read,ipc_ce_write --handles legacy,vmm --samples 10 -o "$d/ipc$i.json" > /dev/null 2>&1
	done
	for v in warp_u8 bulk v4_u4 cs_u8; do
		step "$G/p2pbench" bw --tests sm_host_bidir,sm_h2d,sm_d2h --variant "$v" -o "$d/smhost-$v.json" > "$d/smhost-$v.txt" 2>&1
	done
	for b in 1 4 8; do
		step "$G/p2pbench" bw --tests sm_host_bidir,sm_h2d,sm_d2h --variant warp_u8 --blocks-per-sm "$b" -o "$d/smhost-warp_u8-b$b.json" > "$d/smhost-warp_u8-b$b.txt" 2>&1
	done
}
phase_sens() {
	local d="$W/sens" r
	mkdir -p "$d"
	python3 scripts/scale-samples.py "$W/all1/results.json" "$d/h2d-2pct.json" h2d 0.98 $((16 << 20)) $((1 << 40))
	python3 scripts/scale-samples.py "$W/small1.json" "$d/local-10pct.json" local_copy 0.90 0 $((64 << 10))
	python3 scripts/scale-samples.py "$W/small1.json" "$d/d2h-10pct.json" d2h 0.90 0 $((64 << 10))
	"$G/p2pbench" compare --fail-on-regression "$W/all2/results.json" "$d/h2d-2pct.json" > "$d/compare-h2d-2pct.txt" 2>&1
	echo "h2d 2% slower: rc=$? (want 5) $(grep -c '% REGRESSION' "$d/compare-h2d-2pct.txt") rows flagged; $(tail -1 "$d/compare-h2d-2pct.txt")"
	for t in local d2h; do
		"$G/p2pbench" compare --fail-on-regression "$W/small2.json" "$d/$t-10pct.json" > "$d/compare-$t-10pct.txt" 2>&1
		echo "$t 10% slower at 64 KiB: rc=$? (want 5) $(grep -c '% REGRESSION' "$d/compare-$t-10pct.txt") rows flagged; $(tail -1 "$d/compare-$t-10pct.txt")"
	done
	for r in default b1; do
		local grid=""; [ $r = b1 ] && grid="--blocks-per-sm 1"
		"$G/p2pbench" bw --tests sm_h2d,sm_d2h,local_copy --size 64MiB $grid -o "$d/grid-$r.json" > /dev/null 2>&1
	done
	# The grid is part of a figure's key: the slower run takes the default's params.
	python3 - "$d/grid-default.json" "$d/grid-b1.json" "$d/grid-b1-as-default.json" <<'PY'
import json, sys
base, slow = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
grid = {f["test"]: f["params"]["blocks_per_sm"] for f in base["figures"] if "blocks_per_sm" in (f.get("params") or {})}
for f in slow["figures"]:
    if f["test"] in grid:
        f["params"]["blocks_per_sm"] = grid[f["test"]]
json.dump(slow, open(sys.argv[3], "w"))
PY
	"$G/p2pbench" compare --fail-on-regression "$d/grid-default.json" "$d/grid-b1-as-default.json" > "$d/compare-grid.txt" 2>&1
	echo "SM grid of one block per SM: rc=$?"; grep -E '^[^ ]+ +[0-9]' "$d/compare-grid.txt"
}
for phase in "$@"; do "phase_$phase"; done 2>&1 | tee "$W/onedev.log"
cp "$W/onedev.log" "$OUT/"
tar czf "$OUT/onedev.tgz" -C "$W" .
