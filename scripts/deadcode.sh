#!/usr/bin/env bash
# No product function used only by tests: deadcode (golang.org/x/tools, built
# through the Go module proxy like any module, then from the build cache)
# lists the functions no main package reaches; every one must be in the
# allowed list below, with its reason. Without the module proxy and without
# the tool in the module cache, the check is skipped with a message (CI=true
# makes that an error).
set -euo pipefail
cd "$(dirname "$0")/.."
DEADCODE=golang.org/x/tools/cmd/deadcode@v0.52.0

# Allowed: "path/ [reason]" (a test-support package: all of it) or
# "path/file.go Func [reason]".
allowed='
internal/fakelib/ the gcc-built fake libraries of the binding tests
internal/testgc/ the test binaries'"'"' garbage collector settings
gpu/gputest/ the GPU tests'"'"' device helpers
results/resultstest/ synthetic runs for the readers'"'"' tests
gpu/sim/sim.go WithColdPulls simulator fault knob for other packages'"'"' tests
gpu/sim/sim.go WithPeerLimit simulator fault knob for other packages'"'"' tests
gpu/sim/sim.go WithStickyErrors simulator fault knob for other packages'"'"' tests
gpu/sim/sim.go WithLatchGrace simulator fault knob for other packages'"'"' tests
results/io.go Decode the results library'"'"'s reader of a stream (SCHEMA.md), for programs beside p2pbench
'

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
if ! GOBIN="$bin" GOFLAGS=-mod=mod go install "$DEADCODE" 2>"$bin/err"; then
	if [ "${CI:-}" = true ]; then
		cat "$bin/err" >&2
		exit 1
	fi
	echo "deadcode: skipped: cannot build $DEADCODE (no module proxy?): $(head -1 "$bin/err")" >&2
	exit 0
fi
"$bin/deadcode" ./... >"$bin/out"
bad=0
while IFS= read -r line; do
	file=${line%%:*}
	name=${line##*: }
	ok=0
	while read -r path fn _; do
		[ -n "$path" ] || continue
		case "$path" in
		*/) [[ $file == "$path"* ]] && ok=1 ;;
		*) [[ $file == "$path" && $name == "$fn" ]] && ok=1 ;;
		esac
	done <<<"$allowed"
	if [ $ok = 0 ]; then
		echo "deadcode: $line (no main package reaches it: remove it, or move it into the tests that use it)" >&2
		bad=1
	fi
done <"$bin/out"
exit $bad
