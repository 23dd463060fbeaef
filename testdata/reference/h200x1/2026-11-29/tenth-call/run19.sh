#!/usr/bin/env bash
# One-GPU lease: the session's build (main 3e70b25: parallel command-line tests, simulator, readers'
# speedups): the GPU tests, then five `all` runs checked and compared pairwise (scripts/gpu-onedev.sh).
rm -rf .gpu && tar -xJf .gpuz/gpu.tar.xz
set -u
export OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
TIMEOUT=240 bash .gpu/gpu-onedev.sh tests all5 > /dev/null 2>&1
echo "rc=$?"
tar -xzf $OUT/onedev.tgz -O ./onedev.log 2>/dev/null | grep -E "^(--- FAIL|FAIL|ok)|check|compare|\[rc=" | cut -c1-160 | head -60
