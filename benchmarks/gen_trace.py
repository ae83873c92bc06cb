"""Write a realistic synthetic Kineto trace of N kernels, for import benchmarks.

    python benchmarks/gen_trace.py --kernels 100000 --out /tmp/gpuviz-bench/k100k.json
    python benchmarks/gen_trace.py --kernels 100000 --out /tmp/gpuviz-bench/k100k.json.gz

The layout copies what ``torch.profiler`` (Kineto, 2024+) writes: one field block per event
over several lines, ``ts`` in µs relative to ``baseTimeNanoseconds``, ``deviceProperties``,
``distributedInfo`` (written with a space after each colon, so HTA finds the rank), then the
``traceEvents``: per kernel a ``cpu_op``, its ``cuda_runtime`` launch, the kernel on one of
several streams of several devices, and the ``ac2g`` flow pair tying them by correlation; now
and then a parent op, a host-to-device copy (with its own launch and flows) and ``[memory]``
allocator events; ``ph: M`` thread and process names at the end. About 5.85 events and 1.7 KB
per kernel: 100k kernels make about 585k events and 171 MB.

The output is deterministic for a given ``--seed``.

``--world W --rank R`` writes rank R of a W-rank job (``distributedInfo`` says so): every
``--collective-every`` kernels the rank joins an NCCL all-reduce (a kernel on stream 21 of
device 0, with the ``Collective name``/``Process Group Name`` args Kineto writes) and a
``ProfilerStep#N`` range ends there. Every rank of one seed plans the same collectives: a rank
arrives after its own share of work (jittered per rank and collective), and all of them end
together when the last one has arrived. ``--straggler S`` makes rank S's kernels and work 1.3×
longer (copies are kept under 50 µs in this mode, so that no rank overruns its planned
share); ``--skip-collectives K`` leaves the first K collectives (and steps) out of this rank's
file, as when its profiler window began later. Write a folder with one call per rank::

    for r in $(seq 0 63); do python benchmarks/gen_trace.py --kernels 8000 --devices 1 \
        --world 64 --rank $r --straggler 5 --out /tmp/r64/rank-$r.json; done

or all of them at once, into ``--out DIR`` as ``rank-R.json`` (``.json.gz`` with ``--gz``)::

    python benchmarks/gen_trace.py --kernels 8000 --devices 1 --world 64 --all-ranks \
        --straggler 5 --out /tmp/r64
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import multiprocessing
import random
import sys
from pathlib import Path
from typing import TextIO

BASE_NS = 1790857026000000000
START_US = 4483311211255.469  # relative to BASE_NS, like a real trace of 2026
PID = 3141
KERNELS = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >"
    "(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
    "unsigned int, float, 4>)",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, "
    "false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
    "ampere_sgemm_128x64_tn",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
    "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, "
    "unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
    "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >"
    "(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}",
]
OPS = ["aten::add", "aten::mm", "aten::mean", "aten::_softmax", "aten::addmm", "aten::copy_"]
PARENTS = ["aten::linear", "aten::matmul", "aten::softmax", "aten::layer_norm"]
STREAMS = (7, 13, 17)
COMM_STREAM = 21
STRAGGLER_SLOWDOWN = 1.3
COLLECTIVE_US_PER_KERNEL = 40.0  # a segment's planned length per kernel: above its CPU time


def _header(f: TextIO, devices: int, rank: int = 0, world: int = 1) -> None:
    props = ",".join(
        f"""
    {{
      "id": {d}, "name": "NVIDIA H200", "totalGlobalMem": 150109880320,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    }}"""
        for d in range(devices)
    )
    dist = json.dumps({"backend": "nccl", "rank": rank, "world_size": world})
    f.write(
        f"""
{{
  "schemaVersion": 1,
  "deviceProperties": [{props}
  ],
  "distributedInfo": {dist},
  "trace_id": "0635991E968646B6AE8EFFA91AFDC98E",
  "profile_memory": 1,
  "cuda_driver_version": 13000,
  "cuda_runtime_version": 13000,
  "cupti_version": 130001,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": {BASE_NS},
  "traceEvents": ["""
    )


def _us(t: float) -> str:
    # Kineto prints integer nanoseconds as µs with 3 decimals; do the same, so that a slice
    # that ends where the next one starts prints the same number for both.
    ns = round(t * 1000)
    return f"{ns // 1000}.{ns % 1000:03d}"


def _x(cat: str, name: str, pid: int, tid: int, ts: float, dur: float, args: str) -> str:
    end = round((ts + dur) * 1000)
    start = round(ts * 1000)
    return f"""
  {{
    "ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid},
    "ts": {_us(ts)}, "dur": {(end - start) // 1000}.{(end - start) % 1000:03d},
    "args": {{
      {args}
    }}
  }},"""


def _flow(ph: str, corr: int, pid: int, tid: int, ts: float) -> str:
    bp = ', "bp": "e"' if ph == "f" else ""
    return f"""
  {{
    "ph": "{ph}", "id": {corr}, "pid": {pid}, "tid": {tid}, "ts": {_us(ts)},
    "cat": "ac2g", "name": "ac2g"{bp}
  }},"""


def _fwdbwd(ph: str, flow_id: int, pid: int, tid: int, ts: float) -> str:
    return f"""
  {{
    "ph": "{ph}", "id": {flow_id}, "pid": {pid}, "tid": {tid}, "ts": {_us(ts)},
    "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"
  }},"""


def _memory(
    tid: int,
    ts: float,
    nbytes: int,
    allocated: int,
    reserved: int,
    device: int,
    addr: int,
    idx: int,
) -> str:
    return f"""
  {{
    "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
    "pid": {PID}, "tid": {tid},
    "ts": {_us(ts)},
    "args": {{
      "Total Reserved": {reserved}, "Total Allocated": {allocated}, "Bytes": {nbytes}, "Device Id": {device}, "Device Type": 1, "Addr": {addr}, "finished": false, "Ev Idx": {idx}
    }}
  }},"""


class _CollectivePlan:
    """When each rank of a ``--world`` job arrives at each collective, the same in every rank."""

    def __init__(self, world: int, seed: int, straggler: int, every: int) -> None:
        self.world, self.seed, self.straggler, self.every = world, seed, straggler, every

    def work_us(self, rank: int, c: int) -> float:
        jitter = random.Random(self.seed * 1_000_003 + rank * 7919 + c).random()
        slow = STRAGGLER_SLOWDOWN if rank == self.straggler else 1.0
        return self.every * COLLECTIVE_US_PER_KERNEL * (1.0 + 0.1 * jitter) * slow

    def end_us(self, c: int, start: float) -> float:
        return start + max(self.work_us(r, c) for r in range(self.world)) + 30.0


def write_trace(
    f: TextIO,
    kernels: int,
    devices: int,
    seed: int,
    rank: int = 0,
    world: int = 1,
    straggler: int = -1,
    skip_collectives: int = 0,
    collective_every: int = 250,
    stack: bool = False,
) -> int:
    """Write the trace to ``f``; return the number of events (see the module docstring)."""
    rng = random.Random(seed)
    _header(f, devices, rank, world)
    plan = _CollectivePlan(world, seed, straggler, collective_every) if world > 1 else None
    seg_start = START_US + 50.0
    seg_events = 0
    threads = [PID + 10 + d for d in range(devices)]
    bwd_threads = [PID + 50 + d for d in range(devices)]  # autograd engine threads (--stack)
    bwd_t = [START_US + 50.0] * devices
    last_fwd: list[tuple[int, float] | None] = [None] * devices
    py_id = 0
    cpu_t = [START_US + 50.0] * devices
    gpu_t = {(d, s): START_US + 100.0 for d in range(devices) for s in STREAMS}
    allocated = [256 << 20] * devices
    reserved = [512 << 20] * devices
    corr = 1000
    ext = 1
    ev_idx = 0
    n_events = 0
    out: list[str] = []
    for k in range(kernels):
        d = k % devices
        tid = threads[d]
        t = cpu_t[d]
        ki = rng.randrange(len(KERNELS))
        stream = STREAMS[rng.randrange(len(STREAMS))]
        parent = None
        if rng.random() < 0.15:  # a parent op around this one (written once its end is known)
            parent = (len(out), t, ext, ev_idx)
            out.append("")
            ext += 1
            ev_idx += 1
            n_events += 1
            t += 1.5
        if rng.random() < 0.05:  # a host-to-device copy with its own launch
            corr += 1
            nbytes = rng.choice((4096, 65536, 1 << 20, 16 << 20))
            out.append(
                _x(
                    "cuda_runtime",
                    "cudaMemcpyAsync",
                    PID,
                    tid,
                    t,
                    6.0,
                    f'"External id": {ext},      "cbid": 41, "correlation": {corr}',
                )
            )
            out.append(_flow("s", corr, PID, tid, t))
            g = max(gpu_t[(d, 7)], t + 4.0)
            dur = nbytes / 25e3 + 1.0
            if plan is not None:  # short copies: a rank's work stays inside its planned share
                dur = min(dur, 50.0)
            out.append(
                _x(
                    "gpu_memcpy",
                    "Memcpy HtoD (Pinned -> Device)",
                    d,
                    7,
                    g,
                    dur,
                    f'"External id": {ext},      "device": {d}, "context": 1,      "stream": 7, "correlation": {corr},      "bytes": {nbytes}, "memory bandwidth (GB/s)": {nbytes / dur / 1e3:.6f}',
                )
            )
            out.append(_flow("f", corr, d, 7, g))
            gpu_t[(d, 7)] = g + dur
            n_events += 4
            t += 8.0
        corr += 1
        op_dur = 12.0 + rng.random() * 8
        backward = stack and k % 3 == 2 and last_fwd[d] is not None and parent is None
        fwd_tid, fwd_t = tid, t
        if backward:  # on the autograd thread, in evaluate_function, linked to a forward op
            tid, t = bwd_threads[d], max(bwd_t[d], t)
            out.append(
                _x(
                    "cpu_op",
                    "autograd::engine::evaluate_function: MulBackward0",
                    PID,
                    tid,
                    t,
                    op_dur + 2.0,
                    f'"External id": {ext}, "Ev Idx": {ev_idx}',
                )
            )
            src = last_fwd[d]
            assert src is not None
            out.append(_fwdbwd("s", k, PID, src[0], src[1]))
            out.append(_fwdbwd("f", k, PID, tid, t + 1.0))
            n_events += 3
            t += 1.0
        elif stack:  # Python frames around the op: a module, its forward, torch's _call_impl
            block = (k // 16) % 12
            for j, (nm, pad) in enumerate(
                (
                    # inside a parent op (1.5 µs before, 0.5 after), as real frames are
                    (f"nn.Module: Block_{block}", 0.3),
                    ("model.py(40): forward", 0.2),
                    ("torch/nn/modules/module.py(1751): _call_impl", 0.1),
                )
            ):
                py_id += 1
                parent_id = "null" if j == 0 else str(py_id - 1)
                out.append(
                    _x(
                        "python_function",
                        nm,
                        PID,
                        tid,
                        t - pad,
                        op_dur + 2 * pad,
                        f'"Python parent id": {parent_id}, "Python id": {py_id}, "Ev Idx": {ev_idx}',
                    )
                )
            n_events += 3
            last_fwd[d] = (tid, t)
        out.append(
            _x(
                "cpu_op",
                OPS[ki],
                PID,
                tid,
                t,
                op_dur,
                f'"External id": {ext},"Record function id": 0, "Sequence number": {k}, "Fwd thread id": 0, "Ev Idx": {ev_idx}',
            )
        )
        launch = t + 2.0 + rng.random()
        out.append(
            _x(
                "cuda_runtime",
                "cudaLaunchKernel",
                PID,
                tid,
                launch,
                5.0 + rng.random() * 3,
                f'"External id": {ext},      "cbid": 211, "correlation": {corr}',
            )
        )
        out.append(_flow("s", corr, PID, tid, launch))
        g = max(gpu_t[(d, stream)], launch + 3.0)
        kdur = 2.0 + rng.random() * 30.0
        if plan is not None and rank == straggler:
            kdur *= STRAGGLER_SLOWDOWN
        grid = (rng.randrange(1, 4096), 1, 1)
        out.append(
            _x(
                "kernel",
                KERNELS[ki],
                d,
                stream,
                g,
                kdur,
                f'"External id": {ext},      "queued": 0, "device": {d}, "context": 1,      "stream": {stream}, "correlation": {corr},      "registers per thread": 32,      "shared memory": 0,      "blocks per SM": {grid[0] / 132:.6f},      "warps per SM": {grid[0] * 8 / 132:.6f},      "grid": [{grid[0]}, {grid[1]}, {grid[2]}],      "block": [256, 1, 1],      "est. achieved occupancy %": 100',
            )
        )
        out.append(_flow("f", corr, d, stream, g))
        gpu_t[(d, stream)] = g + kdur
        n_events += 5
        if rng.random() < 0.5:  # allocator activity inside the op
            nbytes = rng.choice((512, 4096, 1 << 20, 4 << 20))
            if rng.random() < 0.5 and allocated[d] > nbytes + (256 << 20):
                nbytes = -nbytes
            allocated[d] += nbytes
            reserved[d] = max(reserved[d], allocated[d] + (64 << 20))
            out.append(
                _memory(
                    tid,
                    t + 1.0,
                    nbytes,
                    allocated[d],
                    reserved[d],
                    d,
                    140206955036672 + rng.randrange(1 << 30) * 512,
                    ev_idx,
                )
            )
            n_events += 1
        ev_idx += 1
        ext += 1
        if parent is not None:
            slot, p_start, p_ext, p_idx = parent
            out[slot] = _x(
                "cpu_op",
                PARENTS[ki % len(PARENTS)],
                PID,
                tid,
                p_start,
                t + op_dur + 0.5 - p_start,
                f'"External id": {p_ext},"Record function id": 0, "Sequence number": {k}, "Fwd thread id": 0, "Ev Idx": {p_idx}',
            )
            t += 0.5
        if backward:
            bwd_t[d] = t + op_dur + 2.0
            tid, t = fwd_tid, fwd_t
        cpu_t[d] = t + op_dur + 1.0 + rng.random() * 4
        skipping = plan is not None and k // collective_every < skip_collectives
        if plan is not None and (k + 1) % collective_every == 0:
            c = k // collective_every
            corr += 1
            n_events += _collective(out, plan, rank, c, seg_start, cpu_t, gpu_t, threads, corr)
            seg_start = cpu_t[0]
            if skipping:  # this rank's profiler window had not begun yet
                out.clear()
                n_events = seg_events
            seg_events = n_events
        if len(out) > 4096 and not skipping:
            f.write("".join(out))
            out.clear()
    if plan is not None and kernels // collective_every < skip_collectives:
        out.clear()
        n_events = seg_events
    f.write("".join(out))
    meta = []
    for d in range(devices):
        meta.append(("process_name", d, 0, '"name": "python3"'))
        meta.append(("process_labels", d, 0, f'"labels": "GPU {d}"'))
        for s in STREAMS + ((COMM_STREAM,) if plan is not None and d == 0 else ()):
            meta.append(("thread_name", d, s, f'"name": "stream {s} "'))
    meta.append(("process_name", PID, 0, '"name": "python3"'))
    for tid in threads + (bwd_threads if stack else []):
        meta.append(("thread_name", PID, tid, f'"name": "thread {tid} (python3)"'))
    parts = [
        f"""
  {{
    "name": "{name}", "ph": "M", "ts": {START_US:.3f}, "pid": {pid}, "tid": {tid},
    "args": {{
      {args}
    }}
  }}"""
        for name, pid, tid, args in meta
    ]
    f.write(",".join(parts))
    n_events += len(parts)
    f.write(f"""
  ],
  "traceName": "synthetic-{kernels}.json"
}}""")
    return n_events


def _collective(
    out: list[str],
    plan: _CollectivePlan,
    rank: int,
    c: int,
    seg_start: float,
    cpu_t: list[float],
    gpu_t: dict[tuple[int, int], float],
    threads: list[int],
    corr: int,
) -> int:
    """Write collective ``c`` (launch, NCCL kernel, flows, the step's range); move time past it."""
    ready = max(max(cpu_t), max(gpu_t.values()))
    arrival = max(seg_start + plan.work_us(rank, c), ready)
    end = max(plan.end_us(c, seg_start), arrival + 5.0)
    tid = threads[0]
    out.append(
        _x(
            "cuda_runtime",
            "cudaLaunchKernelExC",
            PID,
            tid,
            arrival - 6.0,
            4.0,
            f'"External id": {corr},      "cbid": 430, "correlation": {corr}',
        )
    )
    out.append(_flow("s", corr, PID, tid, arrival - 6.0))
    out.append(
        _x(
            "kernel",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            0,
            COMM_STREAM,
            arrival,
            end - arrival,
            f'"External id": {corr},      "queued": 0, "device": 0, "context": 1,      "stream": {COMM_STREAM}, "correlation": {corr},      "registers per thread": 96,      "shared memory": 103808,      "grid": [2, 1, 1],      "block": [512, 1, 1],      "est. achieved occupancy %": 0,      "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": {plan.world}, "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg"',
        )
    )
    out.append(_flow("f", corr, 0, COMM_STREAM, arrival))
    out.append(
        f"""
  {{
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{c}", "pid": {PID}, "tid": {tid},
    "ts": {_us(seg_start)}, "dur": {_us(end - seg_start)},
    "args": {{
      "External id": {corr}
    }}
  }},"""
    )
    for i in range(len(cpu_t)):
        cpu_t[i] = end
    for key in gpu_t:
        gpu_t[key] = end
    return 5


def main(argv: list[str] | None = None) -> int:
    """The command line: ``--kernels N --out FILE.json[.gz]``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", type=int, required=True, help="number of kernels")
    p.add_argument("--out", type=Path, required=True, help="FILE.json or FILE.json.gz")
    p.add_argument("--devices", type=int, default=2, help="GPU devices (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--world", type=int, default=1, help="ranks of the job (default 1)")
    p.add_argument("--rank", type=int, default=0, help="the rank this file is (default 0)")
    p.add_argument("--straggler", type=int, default=-1, help="a slower rank (default none)")
    p.add_argument(
        "--skip-collectives", type=int, default=0, help="this rank's file starts K collectives late"
    )
    p.add_argument("--collective-every", type=int, default=250, help="kernels per step (ranks)")
    p.add_argument(
        "--all-ranks", action="store_true", help="write every rank of --world into --out DIR"
    )
    p.add_argument("--gz", action="store_true", help="with --all-ranks: .json.gz files")
    p.add_argument(
        "--jobs", type=int, default=1, help="with --all-ranks: ranks written in N processes"
    )
    p.add_argument(
        "--stack",
        action="store_true",
        help="Python frames (nn.Module, forward, _call_impl) around forward ops, and every "
        "third op in backward on an autograd thread, linked by fwdbwd flows",
    )
    a = p.parse_args(argv)
    if not 0 <= a.rank < a.world:
        p.error(f"--rank {a.rank}: must be in [0, --world)")
    if not a.all_ranks:
        _write_file(a.out, a, a.rank)
        return 0
    outs = [(a.out / f"rank-{r}.json{'.gz' * a.gz}", a, r) for r in range(a.world)]
    if a.jobs > 1:  # each rank's file is independent of the others: write them side by side
        with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
            pool.starmap(_write_file, outs, chunksize=1)
    else:
        for args in outs:
            _write_file(*args)
    return 0


def _write_file(out: Path, a: argparse.Namespace, rank: int) -> None:
    extra = {
        "rank": rank,
        "world": a.world,
        "straggler": a.straggler,
        "skip_collectives": a.skip_collectives,
        "collective_every": max(a.collective_every, 1),
        "stack": a.stack,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.name.endswith(".gz"):
        with gzip.open(out, "wb", compresslevel=6) as raw:
            with io.TextIOWrapper(raw, encoding="utf-8") as f:
                n = write_trace(f, a.kernels, a.devices, a.seed, **extra)
    else:
        with open(out, "w", encoding="utf-8") as f:
            n = write_trace(f, a.kernels, a.devices, a.seed, **extra)
    size = out.stat().st_size
    print(
        f"{out}: {a.kernels} kernels, {n} events ({n / max(a.kernels, 1):.2f} per kernel), "
        f"{size / 1e6:.1f} MB",
        file=sys.stderr,
    )


if __name__ == "__main__":
    sys.exit(main())
