#!/usr/bin/env bash
# The readers' wall time and peak memory (GNU time) on the inputs of
# BenchmarkReaders (cmd/p2pbench/scale_bench_test.go), as issue 27 measures
# them: every reader at 8 and 72 GPUs, the best of three runs.
# Usage: scripts/readers-rss.sh [DIR]  (DIR keeps the inputs; default a temporary one)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
make -s build
P2PBENCH_READERS_DIR=$dir go test -run '^$' -bench 'BenchmarkReaders/gpus=8/show$' -benchtime 1x ./cmd/p2pbench >/dev/null
out=$(mktemp -d)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-12s %8s %8s %8s\n' gpus reader wall_s user_s rss_MB
for n in 8 72; do
	f="$dir/gpus$n"
	while read -r name args; do
		best=""
		for _ in 1 2 3; do
			# shellcheck disable=SC2086
			/usr/bin/time -f '%e %U %M' -o "$out/t" ./p2pbench $args >/dev/null 2>&1 || true
			line=$(tail -1 "$out/t")
			if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN{split(a,x," ");split(b,y," ");exit !(x[1]<y[1])}'; then best=$line; fi
		done
		read -r wall user rss <<<"$best"
		printf '%-8s %-12s %8s %8s %8d\n' "$n" "$name" "$wall" "$user" $((rss / 1024))
	done <<EOT
show show $f-0.json
check check $f-0.json
compare compare $f-0.json $f-1.json
report-md report -o $out/r.md $f-0.json
report-pdf report -o $out/r.pdf $f-0.json
plot plot -o $out/plots $f-0.json
fleet fleet $f-0.json $f-1.json $f-2.json
show-gz show $f-0.json.gz
EOT
done
rm -rf "$out"
