#!/usr/bin/env bash
# The binding's tests for linux/arm64, run under user-mode emulation: the
# packages that load the NVIDIA libraries through purego (cuda, nvml) are
# built for arm64, their gcc-built fakes are built with the arm64 cross gcc,
# and both run under qemu-aarch64 with the arm64 C library. Needs
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user (Debian); with
# CI=true the script installs them when missing, else it says what to install
# and skips.
set -euo pipefail
cd "$(dirname "$0")/.."
CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
if ! command -v "$CROSS_CC" >/dev/null || ! command -v "$QEMU" >/dev/null || [ ! -d "$SYSROOT/lib" ]; then
	pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
	if [ "${CI:-}" = true ]; then
		sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
		$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
	else
		echo "test-arm64: skipped: needs $CROSS_CC, $QEMU and $SYSROOT (Debian: apt-get install $pkgs)" >&2
		exit 0
	fi
fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for pkg in cuda nvml; do
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go test -c -o "$bin/$pkg.test" "./$pkg/"
	# Test binaries read testdata/ relative to their package, as go test runs them.
	(cd "$pkg" && CI=true CC="$CROSS_CC" QEMU_LD_PREFIX="$SYSROOT" "$QEMU" "$bin/$pkg.test" -test.count=1 | sed "s|^|arm64 $pkg: |")
done
