#!/usr/bin/env bash
# Two builds of p2pbench, A and B, timed against each other on the 72-GPU
# inputs of BenchmarkReaders (as scripts/readers-time.sh times one), their
# runs interleaved (A, B, A, B, ...) so that a loaded machine's load falls
# on both alike: for each reader the median wall time and CPU time (user +
# system) of RUNS runs of each (default 7), with the load averages before
# and after. The inputs are in DIR (scripts/readers-time.sh makes them).
# Usage: [RUNS=7] scripts/readers-ab.sh A B DIR
set -euo pipefail
a=$1 b=$2 dir=$3
runs=${RUNS:-7}
f="$dir/gpus72"
[ -f "$f-2.json" ] || { echo "no inputs in $dir: scripts/readers-time.sh $dir makes them" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "A: $("$a" --version | head -1); B: $("$b" --version | head -1); $(nproc) cores"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '%-8s %16s %16s\n' reader "A wall/cpu s" "B wall/cpu s"
while read -r name args; do
	: >"$out/a"
	: >"$out/b"
	for _ in $(seq "$runs"); do
		for side in a b; do
			bin=$a
			[ "$side" = b ] && bin=$b
			# shellcheck disable=SC2086
			/usr/bin/time -f '%e %U %S' -o "$out/t" "$bin" $args >/dev/null 2>&1 || true
			tail -1 "$out/t" >>"$out/$side"
		done
	done
	for side in a b; do
		wall=$(awk '{print $1}' "$out/$side" | median)
		cpu=$(awk '{printf "%.2f\n", $2 + $3}' "$out/$side" | median)
		printf -v "res_$side" '%s / %s' "$wall" "$cpu"
	done
	printf '%-8s %16s %16s\n' "$name" "$res_a" "$res_b"
done <<EOT
show show $f-0.json
check check $f-0.json
compare compare $f-0.json $f-1.json
report report -o $out/x.pdf $f-0.json
plot plot -o $out/plots $f-0.json
fleet fleet $f-0.json $f-1.json $f-2.json
EOT
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
