"""Synthetic CUDA allocator snapshots in PyTorch's real layout, for tests and benchmarks.

:func:`make_snapshot` runs a small model of the caching allocator through a training loop
(parameters, then per step: forward activations and temporaries, backward gradients, the
optimizer's states and its temporaries) and writes what ``torch.cuda.memory._snapshot()``
returns: ``segments`` with ``blocks`` in address order, ``device_traces`` kept as a ring buffer
of the last ``max_entries`` entries, ``external_annotations`` (``ProfilerStep#N`` and optimizer
ranges) and ``allocator_settings``. Frame dicts are shared between entries, as PyTorch shares
them, so the pickle has the same memo structure and size profile.

The allocator model: requests round up to 512 bytes; requests up to 1 MiB come from 2 MiB
segments, up to 10 MiB from 20 MiB segments, larger ones from their own segment rounded to
2 MiB. A freed block is cached and reused by the next request of the same rounded size; new
blocks are carved from the pool's last segment. It is simpler than PyTorch's (no best fit, no
merging), but every figure a reader computes can be checked against it:
:class:`SyntheticTruth` carries what the model knows (the true peak over the whole run and
over the recorded window, the live bytes when the window began, the OOM).
"""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KB, MB = 1 << 10, 1 << 20
SMALL_SEGMENT = 2 * MB
LARGE_SEGMENT = 20 * MB
SMALL_MAX = 1 * MB
LARGE_MAX = 10 * MB
BASE_TIME_US = 1_760_000_000_000_000  # a unix time in µs, as PyTorch records


def round_block(size: int) -> int:
    """The block a request gets: at least 512 bytes, a multiple of 512."""
    return max(512, (size + 511) // 512 * 512)


@dataclass
class SyntheticTruth:
    """What the allocator model knows about the snapshot it wrote.

    Attributes
    ----------
    peak_bytes : int
        Highest live block bytes over the whole run (``max_memory_allocated``).
    window_peak_bytes : int
        Highest live block bytes from the first recorded entry on.
    window_start_live_bytes : int
        Live block bytes just before the first recorded entry.
    live_bytes : int
        Block bytes live at the snapshot (``memory_allocated``).
    reserved_bytes : int
        Segment bytes at the snapshot (``memory_reserved``).
    entries_total : int
        Trace entries over the whole run (more than recorded when the ring buffer wrapped).
    oom_request_bytes : int or None
        The request that failed, when the run ended out of memory.
    live_by_site : dict
        ``(filename, line) -> block bytes`` live at the snapshot, by allocating site.
    peak_by_site : dict
        The same at the window's peak.
    """

    peak_bytes: int = 0
    window_peak_bytes: int = 0
    window_start_live_bytes: int = 0
    live_bytes: int = 0
    reserved_bytes: int = 0
    entries_total: int = 0
    oom_request_bytes: int | None = None
    live_by_site: dict[tuple[str, int], int] = field(default_factory=dict)
    peak_by_site: dict[tuple[str, int], int] = field(default_factory=dict)


class _Frames:
    """Shared frame dicts and stacks: a user site, called through torch and the stdlib."""

    def __init__(self, depth: int, cpp: bool, user_file: str) -> None:
        self.depth = depth
        self.cpp = cpp
        self.user_file = user_file
        self._frames: dict[tuple[str, int, str], dict[str, Any]] = {}
        self._stacks: dict[tuple[str, int, str], tuple[dict[str, Any], ...]] = {}

    def frame(self, filename: str, line: int, name: str) -> dict[str, Any]:
        key = (filename, line, name)
        f = self._frames.get(key)
        if f is None:
            f = {"filename": filename, "line": line, "name": name}
            self._frames[key] = f
        return f

    def stack(self, site_line: int, site_name: str, lib: str) -> tuple[dict[str, Any], ...]:
        key = (self.user_file, site_line, site_name + lib)
        s = self._stacks.get(key)
        if s is not None:
            return s
        frames = []
        if self.cpp:
            frames += [
                self.frame("??", 0, "c10::cuda::CUDACachingAllocator::Native::malloc"),
                self.frame("/pytorch/aten/src/ATen/EmptyTensor.cpp", 53, "at::empty_cuda"),
                self.frame("/pytorch/torch/csrc/autograd/generated/VariableType.cpp", 1200, lib),
            ]
        torch_dir = "/usr/lib/python3.12/site-packages/torch"
        frames.append(self.frame(f"{torch_dir}/nn/modules/{lib}.py", 125, "forward"))
        frames.append(self.frame(f"{torch_dir}/nn/modules/module.py", 1762, "_call_impl"))
        frames.append(self.frame(self.user_file, site_line, site_name))
        for d in range(max(0, self.depth - len(frames) - 2)):
            frames.append(self.frame(self.user_file, 300 + d, f"caller_{d}"))
        frames.append(self.frame("/usr/lib/python3.12/runpy.py", 88, "_run_code"))
        frames.append(self.frame(self.user_file, 400, "<module>"))
        s = tuple(frames)
        self._stacks[key] = s
        return s


class _Allocator:
    """Exact-size caching per rounded size; bump allocation inside each pool's last segment."""

    def __init__(self, stream: int, limit_bytes: int | None, expandable: bool) -> None:
        self.stream = stream
        self.limit = limit_bytes
        self.expandable = expandable
        self.next_segment_addr = 0x7F00_0000_0000
        self.segments: list[dict[str, Any]] = []  # {"address", "size", "large", "cursor"}
        self.cache: dict[int, list[int]] = {}  # rounded size -> free block addresses
        self.block_size: dict[int, int] = {}  # block address -> size (every carved block)
        self.reserved = 0
        self.current: dict[bool, dict[str, Any] | None] = {True: None, False: None}

    def _segment_size(self, block: int) -> tuple[int, bool]:
        if block <= SMALL_MAX:
            return SMALL_SEGMENT, False
        if block <= LARGE_MAX:
            return LARGE_SEGMENT, True
        return (block + 2 * MB - 1) // (2 * MB) * (2 * MB), True

    def alloc(self, block: int) -> tuple[int, dict[str, Any] | None] | None:
        """(address, new segment or None), or None when the limit is hit (out of memory)."""
        free = self.cache.get(block)
        if free:
            return free.pop(), None
        seg_size, large = self._segment_size(block)
        seg = self.current[large]
        if seg is not None and seg["cursor"] + block <= seg["address"] + seg["size"]:
            addr = seg["cursor"]
            seg["cursor"] += block
            self.block_size[addr] = block
            return addr, None
        if self.limit is not None and self.reserved + seg_size > self.limit:
            return None
        seg = {
            "address": self.next_segment_addr,
            "size": seg_size,
            "large": large,
            "cursor": self.next_segment_addr + block,
        }
        self.next_segment_addr += seg_size + 64 * MB  # gaps between cudaMalloc results
        self.segments.append(seg)
        self.reserved += seg_size
        if block <= seg_size:
            self.current[large] = seg
        self.block_size[seg["address"]] = block
        return seg["address"], seg

    def free(self, addr: int) -> None:
        self.cache.setdefault(self.block_size[addr], []).append(addr)


def make_snapshot(
    entries: int = 10_000,
    *,
    seed: int = 0,
    max_entries: int | None = None,
    oom: bool = False,
    record_stream: bool = False,
    expandable: bool = False,
    cpp_frames: bool = False,
    frame_depth: int = 12,
    annotations: bool = True,
    user_file: str = "/home/me/train.py",
) -> tuple[dict[str, Any], SyntheticTruth]:
    """A snapshot dict of a training loop with about ``entries`` trace entries, and its truth.

    Parameters
    ----------
    entries
        Trace entries to generate over the whole run (the loop runs until it has them).
    max_entries
        Ring-buffer size: only the last ``max_entries`` entries are kept (default: all).
    oom
        End with a failed request (an ``oom`` entry) larger than what is left under a limit.
    record_stream
        Some frees complete later (``free_completed`` after other entries); the last ones stay
        ``active_pending_free`` at the snapshot.
    expandable
        Mark segments ``is_expandable`` and set ``expandable_segments`` in the settings.
    cpp_frames
        Add C++ frames to each stack (``stacks="all"``).
    """
    rng = random.Random(seed)
    frames = _Frames(frame_depth, cpp_frames, user_file)
    stream = 0
    limit = 6 * 1024 * MB if oom else None
    al = _Allocator(stream, limit, expandable)
    trace: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    t = BASE_TIME_US
    live: dict[int, tuple[int, int, tuple[dict[str, Any], ...]]] = {}  # addr -> (block, req, st)
    live_bytes = 0
    peak = 0
    history: list[int] = []  # live block bytes after each entry
    deltas: list[tuple[int, int]] = []  # (block bytes added or removed, site line) per entry
    pending: list[tuple[int, int, int, tuple[dict[str, Any], ...]]] = []  # record_stream frees
    oom_request: int | None = None

    def tick(lo: int = 1, hi: int = 40) -> int:
        nonlocal t
        t += rng.randint(lo, hi)
        return t

    def entry(
        action: str,
        addr: int,
        size: int,
        st: tuple[dict[str, Any], ...],
        change: tuple[int, int] = (0, 0),
    ) -> None:
        trace.append(
            {
                "action": action,
                "addr": addr,
                "size": size,
                "stream": stream,
                "time_us": tick(),
                "frames": list(st),
            }
        )
        history.append(live_bytes)
        deltas.append(change)

    def alloc(req: int, line: int, name: str, lib: str) -> int | None:
        nonlocal live_bytes, peak, oom_request
        block = round_block(req)
        st = frames.stack(line, name, lib)
        got = al.alloc(block)
        if got is None:
            oom_request = req
            trace.append(
                {
                    "action": "oom",
                    "device_free": 123 * MB,
                    "size": req,
                    "stream": stream,
                    "time_us": tick(),
                    "frames": list(st),
                }
            )
            history.append(live_bytes)
            deltas.append((0, 0))
            return None
        addr, seg = got
        if seg is not None:
            trace.append(
                {
                    "action": "segment_alloc",
                    "addr": seg["address"],
                    "size": seg["size"],
                    "stream": stream,
                    "time_us": tick(),
                    "frames": list(st),
                }
            )
            history.append(live_bytes)
            deltas.append((0, 0))
        live_bytes += block
        peak = max(peak, live_bytes)
        live[addr] = (block, req, st)
        entry("alloc", addr, req, st, (block, _site_line(st, user_file)))
        return addr

    def free(addr: int, delayed: bool = False) -> None:
        nonlocal live_bytes
        block, req, st = live.pop(addr)
        entry("free_requested", addr, req, st)
        if delayed:
            pending.append((addr, block, req, st))
            return
        live_bytes -= block
        al.free(addr)
        entry("free_completed", addr, req, st, (-block, _site_line(st, user_file)))

    def complete_pending(keep_last: int = 0) -> None:
        nonlocal live_bytes
        while len(pending) > keep_last:
            addr, block, req, st = pending.pop(0)
            live_bytes -= block
            al.free(addr)
            entry("free_completed", addr, req, st, (-block, _site_line(st, user_file)))

    def annotate(name: str, stage: str) -> None:
        if annotations:
            anns.append({"name": name, "stage": stage, "device": 0, "time_us": tick(0, 2)})

    # parameters: long-lived, allocated once (a wrapped trace loses these entries)
    n_layers = 12
    param_sizes = [
        rng.choice([4, 8, 16, 36]) * MB + rng.randrange(0, 4096, 4) for _ in range(n_layers)
    ]
    for i, s in enumerate(param_sizes):
        alloc(s, 20 + i, "build_model", "linear")
    grads: list[int | None] = []
    opt_state: list[int | None] = []
    step = 0
    window_start_live = 0
    while len(trace) < entries and oom_request is None:
        annotate(f"ProfilerStep#{step}", "START")
        acts: list[int] = []
        for _layer in range(n_layers):
            for k in range(3):
                req = rng.choice([256 * KB, 2 * MB, 6 * MB, 24 * MB]) + rng.randrange(0, 2048, 4)
                a = alloc(req, 50 + k, "forward", rng.choice(["linear", "activation", "dropout"]))
                if a is not None:
                    acts.append(a)
            for _ in range(4):  # temporaries
                a = alloc(rng.randrange(512, 512 * KB, 4), 60, "forward", "functional")
                if a is not None:
                    free(a, delayed=record_stream and rng.random() < 0.2)
            if len(trace) >= entries:
                break
        annotate("backward", "START")
        for a in reversed(acts):
            if a in live:
                free(a, delayed=record_stream and rng.random() < 0.1)
            if step == 0 and len(grads) < n_layers:
                grads.append(alloc(param_sizes[len(grads)], 80, "backward", "autograd"))
            complete_pending(keep_last=3)
        annotate("backward", "END")
        annotate("Optimizer.step#AdamW.step", "START")
        if not opt_state:
            for s in param_sizes:
                opt_state.append(alloc(s, 90, "optimizer_step", "adamw"))
                opt_state.append(alloc(s, 91, "optimizer_step", "adamw"))
        for _ in range(n_layers):
            a = alloc(rng.choice([64 * KB, 4 * MB]), 95, "optimizer_step", "adamw")
            if a is not None:
                free(a)
        annotate("Optimizer.step#AdamW.step", "END")
        annotate(f"ProfilerStep#{step}", "END")
        step += 1
    if oom and oom_request is None:
        alloc(limit or 1 << 40, 70, "forward", "linear")
    if not record_stream:
        complete_pending()

    total = len(trace)
    keep_from = 0 if max_entries is None or total <= max_entries else total - max_entries
    if keep_from:
        window_start_live = history[keep_from - 1]
    window = history[keep_from:]
    window_peak = max([window_start_live, *window])
    # the first entry where the window's peak is reached (-1: before the window began)
    peak_at = (
        keep_from + window.index(window_peak) if window_peak > window_start_live else keep_from - 1
    )
    peak_by_line: dict[int, int] = {}
    for change, line in deltas[: peak_at + 1]:
        if change:
            peak_by_line[line] = peak_by_line.get(line, 0) + change
    recorded = trace[keep_from:]
    recorded.append(
        {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": tick(), "frames": []}
    )
    first_t = recorded[0]["time_us"] if recorded else t
    anns = [a for a in anns if a["time_us"] >= first_t]

    # the state at the snapshot: every carved block, live or cached, in address order
    pending_addrs = {p[0] for p in pending}
    segments = []
    for seg in al.segments:
        blocks = []
        addr = seg["address"]
        end = seg["address"] + seg["size"]
        alloc_sz = act_sz = req_sz = 0
        while addr < end:
            size = al.block_size.get(addr)
            if size is None or addr >= seg["cursor"]:
                blocks.append(
                    {
                        "address": addr,
                        "size": end - addr,
                        "requested_size": 0,
                        "state": "inactive",
                        "frames": [],
                    }
                )
                break
            if addr in live:
                block, req, st = live[addr]
                state, fr = "active_allocated", list(st)
                alloc_sz += block
                act_sz += block
                req_sz += req
            elif addr in pending_addrs:
                p = next(x for x in pending if x[0] == addr)
                state, fr, req = "active_pending_free", list(p[3]), p[2]
                act_sz += size
            else:
                state, fr, req = "inactive", [], 0
            blocks.append(
                {"address": addr, "size": size, "requested_size": req, "state": state, "frames": fr}
            )
            addr += size
        segments.append(
            {
                "device": 0,
                "address": seg["address"],
                "total_size": seg["size"],
                "allocated_size": alloc_sz,
                "active_size": act_sz,
                "requested_size": req_sz,
                "stream": stream,
                "segment_type": "large" if seg["large"] else "small",
                "segment_pool_id": (0, 0),
                "is_expandable": expandable,
                "frames": [],
                "blocks": blocks,
            }
        )

    truth = SyntheticTruth(
        peak_bytes=peak,
        window_peak_bytes=window_peak,
        window_start_live_bytes=window_start_live,
        live_bytes=sum(b for b, _, _ in live.values()),
        reserved_bytes=al.reserved,
        entries_total=total,
        oom_request_bytes=oom_request,
    )
    for block, _req, st in live.values():
        key = (user_file, _site_line(st, user_file))
        truth.live_by_site[key] = truth.live_by_site.get(key, 0) + block
    truth.peak_by_site = {(user_file, line): b for line, b in peak_by_line.items() if b}
    settings = {
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True" if expandable else "",
        "max_split_size": -1,
        "garbage_collection_threshold": 0.0,
        "expandable_segments": expandable,
        "pinned_num_register_threads": 1,
        "release_lock_on_cudamalloc": False,
        "pinned_use_cuda_host_register": False,
        "roundup_power2_divisions": {"1": 0, "2": 0},
    }
    snap = {
        "segments": segments,
        "device_traces": [recorded],
        "allocator_settings": settings,
        "external_annotations": anns,
    }
    return snap, truth


def _site_line(stack: tuple[dict[str, Any], ...], user_file: str) -> int:
    for f in stack:
        if f["filename"] == user_file:
            return int(f["line"])
    return 0


def write_snapshot(path: Path, snapshot: dict[str, Any]) -> Path:
    """Pickle a snapshot dict as ``torch.cuda.memory._dump_snapshot`` does."""
    with open(path, "wb") as f:
        pickle.dump(snapshot, f)
    return path
