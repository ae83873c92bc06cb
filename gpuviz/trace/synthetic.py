"""Synthetic traces for tests and benchmarks: the model's columns built directly with numpy.

:func:`make_trace` builds a plausible training-loop trace of any size in about a second per
million kernels, with no JSON in between: CPU threads launch kernels (``cudaLaunchKernel``
runtime calls nested in cpu ops, under ``ProfilerStep`` annotations), the kernels queue on
their streams, launches and kernels share correlation ids, a few kernels overlap on one
stream (stacked at depth 1), each GPU has ``gpu_user_annotation`` ranges, and each device has
``[memory]`` events.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.model import (
    NONE,
    ArgsStore,
    Flows,
    Instants,
    Kind,
    MemoryEvents,
    RankInfo,
    Slices,
    SymbolTable,
    Trace,
    TrackKind,
    Tracks,
)

KERNEL_NAMES = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
    "ampere_sgemm_128x64_tn",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps>>",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>",
    "triton_poi_fused_add_mul_0",
    "triton_red_fused_native_layer_norm_1",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>",
    "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    "void at::native::softmax_warp_forward<float, float, float, 10, true>",
    "Memcpy HtoD (Pinned -> Device)",
    "Memset (Device)",
]
CPU_OP_NAMES = [
    "aten::linear",
    "aten::addmm",
    "aten::relu",
    "aten::layer_norm",
    "aten::add",
    "aten::softmax",
    "aten::copy_",
    "aten::mul",
]
OUTER_OP_NAMES = ["nn.Module: Linear", "nn.Module: Block", "aten::conv2d", "autograd::engine"]


def _depth_for_overlaps(
    start: npt.NDArray[np.int64], end: npt.NDArray[np.int64]
) -> npt.NDArray[np.int16]:
    # Greedy stacking of slices sorted by start: depth 0 unless it starts before the slice
    # before it ends (good enough for the sparse overlaps made here).
    depth = np.zeros(len(start), dtype=np.int16)
    if len(start) > 1:
        depth[1:] = start[1:] < np.maximum.accumulate(end)[:-1]
    return depth


def make_trace(
    n_kernels: int,
    devices: int = 2,
    streams: int = 4,
    ranks: int = 1,
    cpu_threads: int = 2,
    seed: int = 0,
) -> Trace:
    """Build a synthetic trace of about ``n_kernels`` kernels.

    Parameters
    ----------
    n_kernels : int
        Kernels (and copies/sets, about 8% of them) in all ranks.
    devices : int
        GPUs per rank.
    streams : int
        Streams per GPU (ids 7, 8, …).
    ranks : int
        Ranks; 1 makes a lone-file trace (rank -1).
    cpu_threads : int
        Launching threads per rank.
    seed : int
        Random seed: the same arguments give the same trace.

    Returns
    -------
    Trace
        With ``launches_of`` links for every kernel except a few overlap kernels.
    """
    rng = np.random.default_rng(seed)
    sym = SymbolTable()
    k_names = sym.intern_many(KERNEL_NAMES)
    op_names = sym.intern_many(CPU_OP_NAMES)
    outer_names = sym.intern_many(OUTER_OP_NAMES)
    launch_name = sym.intern("cudaLaunchKernel")
    memcpy_launch = sym.intern("cudaMemcpyAsync")
    cats = {
        k: sym.intern(c)
        for k, c in [
            (Kind.KERNEL, "kernel"),
            (Kind.MEMCPY, "gpu_memcpy"),
            (Kind.MEMSET, "gpu_memset"),
            (Kind.RUNTIME, "cuda_runtime"),
            (Kind.CPU_OP, "cpu_op"),
            (Kind.USER_ANNOTATION, "user_annotation"),
            (Kind.GPU_USER_ANNOTATION, "gpu_user_annotation"),
        ]
    }
    flow_cat = sym.intern("ac2g")
    cat_of_kind = np.zeros(16, dtype=np.int32)
    for k, c in cats.items():
        cat_of_kind[int(k)] = c

    track_rows: list[
        tuple[int, int, int, int, int, int, int]
    ] = []  # kind, rank, dev, stream, pid, tid, label

    def add_track(
        kind: int, rank: int, dev: int, stream: int, pid: int, tid: int, label: str
    ) -> int:
        track_rows.append((kind, rank, dev, stream, pid, tid, sym.intern(label)))
        return len(track_rows) - 1

    parts: list[dict[str, np.ndarray]] = []
    flows: list[dict[str, np.ndarray]] = []
    mems: list[dict[str, np.ndarray]] = []
    ranks_info: list[RankInfo] = []
    n_ranks = max(int(ranks), 1)
    per_rank = max(int(n_kernels) // n_ranks, 1)
    args_rows: list[bytes] = []

    def part(start, dur, track, depth, name, kind, corr, ext=None, nbytes=None, args=None):
        n = len(start)
        parts.append(
            {
                "start_ns": np.asarray(start, dtype=np.int64),
                "dur_ns": np.asarray(dur, dtype=np.int64),
                "track": np.full(n, track, dtype=np.int32)
                if np.isscalar(track)
                else np.asarray(track, dtype=np.int32),
                "depth": np.asarray(depth, dtype=np.int16)
                if not np.isscalar(depth)
                else np.full(n, depth, dtype=np.int16),
                "name": np.asarray(name, dtype=np.int32)
                if not np.isscalar(name)
                else np.full(n, name, dtype=np.int32),
                "cat": cat_of_kind[np.broadcast_to(np.asarray(kind, dtype=np.int64), (n,))],
                "kind": np.asarray(kind, dtype=np.uint8)
                if not np.isscalar(kind)
                else np.full(n, kind, dtype=np.uint8),
                "correlation": np.full(n, NONE, dtype=np.int64)
                if corr is None
                else np.asarray(corr, dtype=np.int64),
                "external_id": np.full(n, NONE, dtype=np.int64)
                if ext is None
                else np.asarray(ext, dtype=np.int64),
                "bytes": np.full(n, NONE, dtype=np.int64)
                if nbytes is None
                else np.asarray(nbytes, dtype=np.int64),
                "args": np.full(n, NONE, dtype=np.int32)
                if args is None
                else np.asarray(args, dtype=np.int32),
            }
        )

    for r in range(n_ranks):
        rank = r if ranks > 1 else NONE
        pid = 1000 + r
        n = per_rank
        gpu_streams = [(d, 7 + s) for d in range(devices) for s in range(streams)]
        n_targets = len(gpu_streams)
        stream_tracks = [
            add_track(TrackKind.GPU_STREAM, rank, d, s, d, s, f"stream {s}") for d, s in gpu_streams
        ]
        annot_tracks = [
            add_track(TrackKind.GPU_ANNOTATION, rank, d, 7, d, 7, "stream 7")
            for d in range(devices)
        ]
        # ---- CPU side: launches on each thread, evenly spaced with jitter.
        thread = rng.integers(0, cpu_threads, n)
        target = rng.integers(0, n_targets, n)
        name_pick = rng.zipf(1.6, n) % len(KERNEL_NAMES)
        kind = np.where(
            name_pick == 11, Kind.MEMCPY, np.where(name_pick == 12, Kind.MEMSET, Kind.KERNEL)
        ).astype(np.uint8)
        corr = np.arange(n, dtype=np.int64) + 1 + r * 10_000_000
        launch_start = np.empty(n, dtype=np.int64)
        launch_track = np.empty(n, dtype=np.int64)
        launch_dur = rng.integers(1_500, 2_500, n)
        kernel_start = np.empty(n, dtype=np.int64)
        kernel_dur = np.maximum((rng.lognormal(8.3, 1.0, n)).astype(np.int64), 800)
        for th in range(cpu_threads):
            idx = np.flatnonzero(thread == th)
            m = len(idx)
            if m == 0:
                continue
            gaps = rng.integers(4_000, 8_000, m)
            launch_start[idx] = np.cumsum(gaps) + 50_000 + th * 1_000
            cpu_tid = 100 + th
            t_annot = add_track(
                TrackKind.CPU_ANNOTATION, rank, NONE, NONE, pid, cpu_tid, f"thread {cpu_tid}"
            )
            t_cpu = add_track(
                TrackKind.CPU_THREAD, rank, NONE, NONE, pid, cpu_tid, f"thread {cpu_tid}"
            )
            launch_track[idx] = t_cpu
            ls, le = launch_start[idx], launch_start[idx] + launch_dur[idx]
            rt_name = np.where(kind[idx] == Kind.KERNEL, launch_name, memcpy_launch)
            part(ls, le - ls, t_cpu, 2, rt_name, Kind.RUNTIME, corr[idx])
            # cpu ops: each covers 4 launches (depth 1); an outer op covers 4 of those (depth 0).
            g1 = np.arange(m) // 4
            f1 = np.flatnonzero(np.concatenate(([True], g1[1:] != g1[:-1])))
            s1 = ls[f1] - 300
            e1 = np.maximum.reduceat(le, f1) + 300
            part(
                s1,
                e1 - s1,
                t_cpu,
                1,
                op_names[np.arange(len(s1)) % len(op_names)],
                Kind.CPU_OP,
                None,
                ext=np.arange(len(s1)) + 1,
            )
            g0 = np.arange(len(s1)) // 4
            f0 = np.flatnonzero(np.concatenate(([True], g0[1:] != g0[:-1])))
            s0 = s1[f0] - 300
            e0 = np.maximum.reduceat(e1, f0) + 300
            part(
                s0,
                e0 - s0,
                t_cpu,
                0,
                outer_names[np.arange(len(s0)) % len(outer_names)],
                Kind.CPU_OP,
                None,
            )
            # ProfilerStep annotations: 64 outer ops each.
            gs = np.arange(len(s0)) // 64
            fs = np.flatnonzero(np.concatenate(([True], gs[1:] != gs[:-1])))
            ss = s0[fs] - 200
            es = np.maximum.reduceat(e0, fs) + 200
            step_names = sym.intern_many(f"ProfilerStep#{i}" for i in range(len(ss)))
            part(ss, es - ss, t_annot, 0, step_names, Kind.USER_ANNOTATION, None)
        # ---- GPU side: each stream is a queue; a kernel starts when launched and the stream is free.
        ready = launch_start + 4_000 + rng.integers(0, 6_000, n)
        order = np.lexsort((ready, target))
        tgt_sorted = target[order]
        bounds = np.searchsorted(tgt_sorted, np.arange(n_targets + 1))
        for ti in range(n_targets):
            idx = order[bounds[ti] : bounds[ti + 1]]
            if len(idx) == 0:
                continue
            d = kernel_dur[idx]
            cum = np.cumsum(d)
            prev = np.concatenate(([0], cum[:-1]))
            # end_k = max(ready_k + d_k, end_{k-1} + d_k): a running max in shifted coordinates.
            end = cum + np.maximum.accumulate(ready[idx] - prev)
            kernel_start[idx] = end - d
        for ti, (dev, s) in enumerate(gpu_streams):
            idx = order[bounds[ti] : bounds[ti + 1]]
            if len(idx) == 0:
                continue
            a0 = len(args_rows)
            for nm in KERNEL_NAMES:
                args_rows.append(
                    b'{"device": %d, "stream": %d, "grid": [128, 1, 1], "block": [256, 1, 1], '
                    b'"registers per thread": 32, "shared memory": 0, "name": "%s"}'
                    % (dev, s, nm.encode())
                )
            names = k_names[name_pick[idx]]
            nbytes = np.where(kind[idx] != Kind.KERNEL, 4096 * (1 + name_pick[idx]), NONE)
            part(
                kernel_start[idx],
                kernel_dur[idx],
                stream_tracks[ti],
                0,
                names,
                kind[idx],
                corr[idx],
                nbytes=nbytes,
                args=a0 + name_pick[idx],
            )
            if ti == 0 and len(idx) > 10:
                # A few kernels that overlap others on this stream (graph replays, MPS…).
                pick = idx[rng.choice(len(idx) - 1, size=min(5, len(idx) - 1), replace=False)]
                os_ = kernel_start[pick] + kernel_dur[pick] // 3
                part(
                    os_,
                    np.maximum(kernel_dur[pick], 2_000),
                    stream_tracks[ti],
                    1,
                    k_names[0],
                    Kind.KERNEL,
                    None,
                )
            # flows: launch -> kernel
            fl_n = len(idx)
            flows.append(
                {
                    "flow_id": np.concatenate([corr[idx], corr[idx]]),
                    "phase": np.concatenate(
                        [np.full(fl_n, ord("s")), np.full(fl_n, ord("f"))]
                    ).astype(np.uint8),
                    "ts_ns": np.concatenate([launch_start[idx], kernel_start[idx]]),
                    "track": np.concatenate(
                        [launch_track[idx], np.full(fl_n, stream_tracks[ti])]
                    ).astype(np.int32),
                    "name": np.full(2 * fl_n, flow_cat, dtype=np.int32),
                    "cat": np.full(2 * fl_n, flow_cat, dtype=np.int32),
                    "enclosing": np.concatenate([np.zeros(fl_n), np.ones(fl_n)]).astype(np.uint8),
                }
            )
        # GPU annotations: per device, the span of each step's kernels.
        step_of = np.searchsorted(np.sort(launch_start)[::256], launch_start, side="right") - 1
        for dev in range(devices):
            on_dev = np.flatnonzero(target // streams == dev)
            if len(on_dev) == 0:
                continue
            o = on_dev[np.argsort(step_of[on_dev], kind="stable")]
            st = step_of[o]
            f = np.flatnonzero(np.concatenate(([True], st[1:] != st[:-1])))
            a_s = np.minimum.reduceat(kernel_start[o], f)
            a_e = np.maximum.reduceat(kernel_start[o] + kernel_dur[o], f)
            srt = np.argsort(a_s, kind="stable")
            a_s, a_e = a_s[srt], a_e[srt]
            step_ids = sym.intern_many(f"step {int(v)}" for v in st[f][srt])
            part(
                a_s,
                a_e - a_s,
                annot_tracks[dev],
                _depth_for_overlaps(a_s, a_e),
                step_ids,
                Kind.GPU_USER_ANNOTATION,
                None,
            )
        # [memory]: a saw-tooth of allocations per device.
        span = int(kernel_start.max() + kernel_dur.max()) if n else 1
        m_n = max(min(n // 50, 20_000), 10)
        for dev in range(devices):
            ts = np.sort(rng.integers(0, span, m_n))
            nb = (
                np.where(np.arange(m_n) % 2 == 0, 1, -1)
                * (1 << 20)
                * (1 + rng.integers(0, 64, m_n))
            )
            alloc = np.cumsum(nb) - min(0, int(np.cumsum(nb).min()))
            mems.append(
                {
                    "ts_ns": ts,
                    "rank": np.full(m_n, rank, dtype=np.int32),
                    "device_type": np.ones(m_n, dtype=np.int8),
                    "device_id": np.full(m_n, dev, dtype=np.int32),
                    "addr": rng.integers(1 << 40, 1 << 41, m_n),
                    "bytes": nb.astype(np.int64),
                    "total_allocated": alloc.astype(np.int64),
                    "total_reserved": (np.maximum.accumulate(alloc) + (64 << 20)).astype(np.int64),
                    "track": np.full(m_n, t_cpu, dtype=np.int32),
                }
            )
        ranks_info.append(
            RankInfo(
                rank=r if ranks > 1 else None,
                source=f"<synthetic rank {r}>",
                metadata={"synthetic": True},
                event_count=0,
            )
        )

    slices = Slices(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})
    order = np.lexsort((slices.start_ns, slices.track))
    slices = slices.take(order)
    tr = np.asarray(track_rows, dtype=np.int64).reshape(-1, 7)
    tracks = Tracks(
        kind=tr[:, 0].astype(np.uint8),
        rank=tr[:, 1].astype(np.int32),
        device=tr[:, 2].astype(np.int32),
        stream=tr[:, 3].astype(np.int64),
        pid=tr[:, 4].astype(np.int64),
        tid=tr[:, 5].astype(np.int64),
        label=tr[:, 6].astype(np.int32),
    )
    fl = (
        Flows(**{k: np.concatenate([f[k] for f in flows]) for k in flows[0]})
        if flows
        else Flows.empty()
    )
    mem = (
        MemoryEvents(**{k: np.concatenate([m[k] for m in mems]) for k in mems[0]})
        if mems
        else MemoryEvents.empty()
    )
    blob = b"".join(args_rows)
    offsets = np.concatenate(([0], np.cumsum([len(a) for a in args_rows]))).astype(np.int64)
    for info in ranks_info:
        info.event_count = len(slices) // n_ranks
    return Trace(
        symbols=sym,
        slices=slices,
        tracks=tracks,
        flows=fl,
        memory=mem,
        instants=Instants.empty(),
        args=ArgsStore(blob, offsets),
        ranks=ranks_info,
        zero_ns=1_700_000_000_000_000_000,
        event_count=len(slices) + len(fl) + len(mem),
        warnings=ImportWarnings(),
    )
