#!/usr/bin/env bash
# GPU verification of a checkout, on the device machine (one CUDA GPU, torch with CUDA).
#   bash scripts/gpu/verify.sh OUT_DIR [PART...]     parts: tests memory overhead profile
# Each part logs to OUT_DIR/<part>.log; small results land in OUT_DIR too.
set -u
out=${1:?OUT_DIR}; shift
parts=${*:-tests memory overhead}
mkdir -p "$out"
export PYTHONPATH=${PYTHONPATH:-}:$PWD PYTHONUNBUFFERED=1 QT_QPA_PLATFORM=offscreen
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for part in $parts; do
  case $part in
    tests)
      timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider tests/engine tests/workloads \
        tests/analysis tests/trace tests/test_cli_run.py > "$out/tests.log" 2>&1
      echo "tests: rc=$?"; tail -5 "$out/tests.log" ;;
    memory)
      { timeout 150 python3 scripts/gpu/check_memory_snapshot.py "$out/mem"; echo "rc=$?";
        timeout 150 python3 benchmarks/bench_memory.py --no-view --dir /tmp/bm; echo "rc=$?"; } \
        > "$out/memory.log" 2>&1
      echo "memory:"; tail -25 "$out/memory.log" ;;
    overhead)
      { timeout 300 python3 benchmarks/bench_overhead.py --reps 20 --json "$out/overhead.json"; echo "rc=$?";
        timeout 200 python3 benchmarks/overhead_probe.py --reps 15; echo "rc=$?"; } \
        > "$out/overhead.log" 2>&1
      echo "overhead:"; grep -v Warn "$out/overhead.log" | tail -25 ;;
  esac
done
