#!/usr/bin/env bash
# Where a `gpuviz summary --no-cache` process's time goes on this host (issue 25): the 64-rank
# folder of 100k kernels each and one 100k-kernel file (benchmarks/startup_phases.py), numpy's
# import with and without OpenBLAS's threads. The folder is where benchmarks/bench_scale.py
# looks for it. Usage: bash scripts/gpu/phases64.sh OUT_DIR [ranks]  (ranks: the folder only)
set -u
out=${1:?OUT_DIR}; d=/tmp/gpuviz-bench/scale; r=$d/w64-k100000; mkdir -p "$r" "$out"
nproc; uptime
t=$(date +%s.%N)
[ -f "$r/rank-63.json" ] || seq 0 63 | xargs -P "$(nproc)" -I{} python3 benchmarks/gen_trace.py --kernels 100000 --world 64 --rank {} --out "$r/rank-{}.json" 2>/dev/null
[ -f "$d/k100000.json" ] || python3 benchmarks/gen_trace.py --kernels 100000 --out "$d/k100000.json" 2>/dev/null
echo "generated in $(python3 -c "print(round($(date +%s.%N)-$t,1))") s: $(du -sh "$r" | cut -f1)"
[ "${2:-}" = ranks ] && exit 0
cd benchmarks
timeout 120 python3 startup_phases.py "$r" --repeat 1 2>&1 | tail -9
timeout 60 python3 startup_phases.py "$d/k100000.json" --repeat 3 2>&1 | tail -9
echo "OPENBLAS_NUM_THREADS=1:"
OPENBLAS_NUM_THREADS=1 timeout 60 python3 startup_phases.py "$d/k100000.json" --repeat 3 2>&1 | tail -9
for v in "" 1; do for k in 1 2 3; do OPENBLAS_NUM_THREADS=$v python3 -X importtime -c "import numpy" 2>&1 | tail -1; done; done
