#!/usr/bin/env bash
# check_ptx.sh: assemble every kernels/*.ptx with ptxas for sm_90 (the 2x H200
# machine), printing each kernel's resource usage (-v: registers, shared
# memory, stack, spills). Exits non-zero if any module fails to assemble or
# any kernel spills or uses local memory (none of them should).
#
# Usage: kernels/check_ptx.sh [arch]    (arch defaults to sm_90)
# Needs ptxas (CUDA toolkit) on PATH or under /usr/local/cuda/bin.
set -u -o pipefail

arch="${1:-sm_90}"
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="$(command -v ptxas || true)"
if [[ -z "$ptxas" && -x /usr/local/cuda/bin/ptxas ]]; then
	ptxas=/usr/local/cuda/bin/ptxas
fi
if [[ -z "$ptxas" ]]; then
	echo "check_ptx: ptxas not found (install the CUDA toolkit or put it on PATH)" >&2
	exit 2
fi
"$ptxas" --version | tail -n 1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

failed=0
for f in "$here"/*.ptx; do
	name="$(basename "$f" .ptx)"
	log="$tmp/$name.log"
	if "$ptxas" -arch="$arch" -v -Werror -o "$tmp/$name.cubin" "$f" >"$log" 2>&1; then
		status=ok
	else
		status=FAILED
		failed=1
	fi
	echo "== $name.ptx: $status"
	cat "$log"
	# ptxas -v reports "N bytes stack frame, N bytes spill stores, N bytes spill loads".
	if grep -Eq '([1-9][0-9]* bytes stack frame|[1-9][0-9]* bytes spill)' "$log"; then
		echo "== $name.ptx: uses local memory (stack or spills)"
		failed=1
	fi
done

if [[ $failed -ne 0 ]]; then
	echo "check_ptx: FAILED" >&2
	exit 1
fi
echo "check_ptx: all modules assemble for $arch"
