#!/usr/bin/env bash
# The readers as whole processes on the 72-GPU inputs of BenchmarkReaders
# (cmd/p2pbench/scale_bench_test.go), as issue 43 measures them: show, check,
# compare of two runs, the PDF report, plot and fleet of three runs, each the
# median of RUNS (default 3) runs of the built command (or of the binaries
# BIN names, other builds'): wall time, CPU time (user + system) and peak
# RSS, with the load averages before and after. Several binaries (BIN="A B")
# are timed against each other, their runs interleaved (A, B, A, B, ...) so
# that a loaded machine's load falls on each alike: a column each.
# Usage: [RUNS=3] [BIN="path ..."] scripts/readers-time.sh [DIR]  (DIR keeps the inputs; made when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d)}
runs=${RUNS:-3}
mkdir -p "$dir"
read -r -a bins <<<"${BIN:-./p2pbench}"
[ -n "${BIN:-}" ] || make -s build
if [ ! -f "$dir/gpus72-2.json" ]; then
	P2PBENCH_READERS_DIR=$dir go test -run '^$' -bench 'BenchmarkReaders/gpus=8/show$' -benchtime 1x ./cmd/p2pbench >/dev/null
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
f="$dir/gpus72"
for bin in "${bins[@]}"; do
	echo "$bin: $("$bin" --version 2>/dev/null | head -1)"
done
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
if [ ${#bins[@]} -eq 1 ]; then
	printf '%-8s %7s %7s %7s\n' reader wall_s cpu_s rss_MB
else
	printf '%-8s' reader
	for i in "${!bins[@]}"; do printf ' %22s' "$((i + 1)): wall/cpu s/rss MB"; done
	echo
fi
while read -r name args; do
	for i in "${!bins[@]}"; do : >"$out/$i"; done
	for _ in $(seq "$runs"); do
		for i in "${!bins[@]}"; do
			# shellcheck disable=SC2086
			/usr/bin/time -f '%e %U %S %M' -o "$out/t" "${bins[$i]}" $args >/dev/null 2>&1 || true
			tail -1 "$out/t" >>"$out/$i"
		done
	done
	printf '%-8s' "$name"
	for i in "${!bins[@]}"; do
		wall=$(awk '{print $1}' "$out/$i" | median)
		cpu=$(awk '{printf "%.2f\n", $2 + $3}' "$out/$i" | median)
		rss=$(awk '{print int($4 / 1024)}' "$out/$i" | median)
		if [ ${#bins[@]} -eq 1 ]; then
			printf ' %7s %7s %7s' "$wall" "$cpu" "$rss"
		else
			printf ' %22s' "$wall / $cpu / $rss"
		fi
	done
	echo
done <<EOT
show show $f-0.json
check check $f-0.json
compare compare $f-0.json $f-1.json
report report -o $out/x.pdf $f-0.json
plot plot -o $out/plots $f-0.json
fleet fleet $f-0.json $f-1.json $f-2.json
EOT
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
