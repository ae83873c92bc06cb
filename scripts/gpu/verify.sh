#!/usr/bin/env bash
# GPU verification of a checkout, on the device machine (one CUDA GPU, torch with CUDA).
#   bash scripts/gpu/verify.sh OUT_DIR [PART...]   parts: tests memory overhead profile benchprofile import
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
        timeout 150 python3 benchmarks/bench_memory.py synthetic --no-view --dir /tmp/bm; echo "rc=$?"; } \
        > "$out/memory.log" 2>&1
      echo "memory:"; tail -25 "$out/memory.log" ;;
    overhead)
      { timeout 300 python3 benchmarks/bench_overhead.py --reps 20 --json "$out/overhead.json"; echo "rc=$?";
        timeout 200 python3 benchmarks/step_cost.py --device cuda; echo "rc=$?"; } \
        > "$out/overhead.log" 2>&1
      echo "overhead:"; grep -v Warn "$out/overhead.log" | tail -25 ;;
    profile)
      {
        set -x
        timeout 120 python3 -m gpuviz profile --stop --out "$out/gpt.json.gz" examples/gpt_train.py --steps 200; echo "rc=$?"
        timeout 60 python3 -m gpuviz advise "$out/gpt.json.gz"; echo "rc=$?"
        timeout 150 python3 -m gpuviz profile --stop --memory-snapshot --out /tmp/p/resnet.json.gz examples/resnet_train.py --model resnet50; echo "rc=$?"
        ls -la /tmp/p; timeout 60 python3 -m gpuviz memory /tmp/p/resnet.memory.pickle | head -30
        timeout 60 python3 -m gpuviz advise /tmp/p/resnet.json.gz; echo "rc=$?"
        timeout 120 python3 -m gpuviz profile --step-fn __main__:generate --out "$out/gen.json.gz" examples/generate.py; echo "rc=$?"
        timeout 150 python3 -m gpuviz profile --nproc-per-node 2 --out "$out/gloo2" tests/data/scripts/ddp_gloo.py --device cuda; echo "rc=$?"
        timeout 60 python3 -m gpuviz summary "$out/gloo2" --json | head -c 600; echo
        set +x
      } > "$out/profile.log" 2>&1
      echo "profile:"; grep -v Warn "$out/profile.log" | tail -60 ;;
    import)  # the importer on this host's cores (16 on the GPU machines): bench_import side by side
      {
        d=/tmp/gpuviz-import; mkdir -p $d; nproc; uptime
        [ -f $d/k100k.json ] || python3 benchmarks/gen_trace.py --kernels 100000 --out $d/k100k.json
        [ -d $d/r64 ] || python3 benchmarks/gen_trace.py --kernels 8000 --devices 1 --world 64 --all-ranks --straggler 5 --out $d/r64
        [ -f $d/k1m.json ] || python3 benchmarks/gen_trace.py --kernels 1000000 --out $d/k1m.json
        sleep 20; uptime
        # --workers: time against memory (each child holds ~35 MB, summed in the tree's peak)
        timeout 150 python3 benchmarks/bench_import.py $d/k100k.json --skip-hta --single --workers 3,6 --repeat 3; echo "rc=$?"
        timeout 240 python3 benchmarks/bench_import.py $d/r64 --skip-hta --single --workers 4,8 --repeat 2; echo "rc=$?"
        timeout 200 python3 benchmarks/bench_import.py $d/k1m.json --skip-hta --repeat 1; echo "rc=$?"
      } > "$out/import.log" 2>&1
      echo "import:"; grep -v Warn "$out/import.log" | tail -60 ;;
    benchprofile)
      timeout 300 python3 benchmarks/bench_profile.py --budget-s 280 --json "$out/benchprofile.json" > "$out/benchprofile.log" 2>&1
      echo "benchprofile: rc=$?"; tail -15 "$out/benchprofile.log" ;;
  esac
done
