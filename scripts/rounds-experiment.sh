#!/usr/bin/env bash
# The GPU experiments of issue 13 (numbers that hold from run to run), on the
# GPU machine from the repository root with the bundle of `make gpu` in .gpu/.
# Usage: scripts/rounds-experiment.sh PHASE...  Results and logs go to $OUT
# (default ./gpu-out/rounds); every p2pbench run is a process of its own.
#
#   renew  which state a process keeps: five processes of a small-size bw for
#          each --renew setting (none, each kind alone, the default, all);
#          scripts/spread.py on each says whether the rounds spread as the
#          processes do (runs' medians about 0.55 × the rounds' CV) or less
#   lat    the small-copy and chase latencies in five processes, with the
#          default renewal and with none: the per-process modes
#   all    five back-to-back `p2pbench all` runs, timed (P2PBENCH_TRACE), the
#          10 pairwise `compare --fail-on-regression`, 2 against 3 grouped, and
#          how often run 1's intervals cover the others' medians
#   sens   sensitivity: run 1 of `all` with ce_read 2% lower from 16 MiB, and
#          sm_write 10% lower up to 64 KiB; an SM copy with --blocks-per-sm 1
#          against the default grid
#   b2b    the CUDA C check of back-to-back copies (tools/kernel-selftest/b2b_copy.cu)
set -u
OUT=${OUT:-$PWD/gpu-out/rounds}
P=$PWD/.gpu/p2pbench
SPREAD="python3 $PWD/scripts/spread.py"
mkdir -p "$OUT"
exec 3>&1 # the terminal, for timed's line when a run's output goes to a file
log() { echo; echo "=== $* ==="; }
timed() { local t0=$(date +%s%N); "$@"; local rc=$?; echo "[rc=$rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms] $*" >&3; return $rc; }

scale() { python3 "$(dirname "$0")/scale-samples.py" "$@"; }

for phase in "$@"; do
case $phase in
renew)
	for r in none offset alloc streams events offset,streams,events all; do
		log "--renew $r: five processes"
		d="$OUT/renew-${r//,/+}"
		mkdir -p "$d"
		for i in 1 2 3 4 5; do
			timed "$P" bw --renew "$r" --tests ce_read,ce_write,sm_read,sm_write --sizes 4B,1KiB,16KiB,128KiB,1MiB,16MiB --size 512MiB -o "$d/run$i.json" > "$d/run$i.log" 2>&1
		done
		$SPREAD "$d"/run*.json --top 12 | tee "$d/spread.txt"
	done
	;;
lat)
	for r in offset,streams,events none; do
		log "lat, --renew $r: five processes"
		d="$OUT/lat-${r//,/+}"
		mkdir -p "$d"
		for i in 1 2 3 4 5; do
			timed "$P" lat --renew "$r" --tests lat_copy,lat_chase -o "$d/run$i.json" > "$d/run$i.log" 2>&1
		done
		$SPREAD "$d"/run*.json --top 20 | tee "$d/spread.txt"
		grep -h -A3 "rounds_disagree\|Small-copy latency" "$d/run1.log" | head -30
	done
	;;
all)
	d="$OUT/all"
	mkdir -p "$d"
	for i in 1 2 3 4 5; do
		log "all, run $i"
		P2PBENCH_TRACE=1 timed "$P" all --dir "$d/run$i" > "$d/run$i.log" 2> "$d/run$i.trace"
		grep -h "figures in" "$d/run$i.log" | tail -1
	done
	log "the 10 pairwise comparisons (default gate)"
	for a in 1 2 3 4 5; do
		for b in 1 2 3 4 5; do
			[ $a -lt $b ] || continue
			"$P" compare --fail-on-regression "$d/run$a/results.json" "$d/run$b/results.json" > "$d/compare-$a-$b.txt" 2>&1
			echo "run$a vs run$b: exit $? — $(grep 'figures compared' "$d/compare-$a-$b.txt")"
		done
	done
	log "runs 1 and 2 against runs 3, 4 and 5"
	"$P" compare --fail-on-regression "$d"/run1/results.json "$d"/run2/results.json -- "$d"/run{3,4,5}/results.json > "$d/compare-grouped.txt" 2>&1
	echo "exit $? — $(grep 'figures compared' "$d/compare-grouped.txt")"
	$SPREAD "$d"/run*/results.json --top 25 | tee "$d/spread.txt"
	;;
sens)
	d="$OUT/all"
	log "sensitivity: ce_read 2% lower from 16 MiB, sm_write 10% lower up to 64 KiB"
	scale "$d/run1/results.json" "$d/ce-read-2pct.json" ce_read 0.98 $((16 << 20)) $((1 << 40))
	scale "$d/run1/results.json" "$d/sm-write-10pct.json" sm_write 0.90 0 $((64 << 10))
	for f in ce-read-2pct sm-write-10pct; do
		"$P" compare --fail-on-regression "$d/run2/results.json" "$d/$f.json" > "$d/compare-$f.txt" 2>&1
		echo "$f: exit $? (want 5) — $(grep 'figures compared' "$d/compare-$f.txt")"
		grep -E "REGRESSION|better" "$d/compare-$f.txt" | head -20
	done
	log "sensitivity: SM copies with --blocks-per-sm 1 against the default grid"
	s="$OUT/grid"
	mkdir -p "$s"
	"$P" bw --tests sm_read,sm_write --sizes 4B,64KiB,1MiB,16MiB -o "$s/default.json" > "$s/default.log" 2>&1
	"$P" bw --tests sm_read,sm_write --sizes 4B,64KiB,1MiB,16MiB --blocks-per-sm 1 -o "$s/one-block.json" > "$s/one-block.log" 2>&1
	# The grid is part of a figure's key: give the slower run the default's
	# params, so that compare pairs the figures.
	python3 - "$s/default.json" "$s/one-block.json" "$s/one-block-as-default.json" <<'EOF'
import json, sys
base, slow = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
grid = {k: v for f in base["figures"] for k, v in (f.get("params") or {}).items() if k == "blocks_per_sm"}
for f in slow["figures"]:
    if "blocks_per_sm" in (f.get("params") or {}):
        f["params"]["blocks_per_sm"] = grid["blocks_per_sm"]
json.dump(slow, open(sys.argv[3], "w"))
EOF
	"$P" compare --fail-on-regression "$s/default.json" "$s/one-block-as-default.json" > "$s/compare.txt" 2>&1
	echo "exit $? — $(grep 'figures compared' "$s/compare.txt")"
	cat "$s/compare.txt"
	;;
b2b)
	log "back-to-back peer copies, CUDA C (tools/kernel-selftest/b2b_copy.cu)"
	nvcc -O2 -o "$OUT/b2b_copy" tools/kernel-selftest/b2b_copy.cu && "$OUT/b2b_copy" 50 20 | tee "$OUT/b2b_copy.txt"
	;;
*)
	echo "unknown phase $phase (renew, lat, all, sens, b2b)" >&2
	exit 2
	;;
esac
done
