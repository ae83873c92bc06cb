"""Recording the trace: ``torch.profiler`` over the profiled steps, a fast writer, and the
per-strategy figures read from the profiler's own events.

The profiler records CPU and CUDA activity with shapes and memory. Its ``schedule`` makes the
profiled steps one active window (``wait=0, warmup=0``: the Runner's own warm-ups ran before the
profiler started, so they never appear in the trace), and ``on_trace_ready`` writes the trace.

Writing: ``export_chrome_trace(path.json.gz)`` saves the JSON and then recompresses it with
Python's gzip at level 9. :func:`write_trace` lets Kineto save the JSON (C++) and compresses it
at level 1, in large blocks; see ``benchmarks/bench_overhead.py`` for the figures.

Each profiled step runs inside ``record_function("gpuviz/<label>#<step>")``: the trace shows
which strategy each kernel belongs to, and :func:`strategy_figures` counts launches, GPU busy
time, idle share and stream overlap per strategy from the same events, without re-reading the
file.
"""

from __future__ import annotations

import gzip
import os
import shutil
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

STEP_PREFIX = "gpuviz/"
"""Name prefix of the ``record_function`` range around each profiled step."""


def step_range_name(label: str, step: int) -> str:
    """The ``record_function`` name of a profiled step."""
    return f"{STEP_PREFIX}{label}#{step}"


def write_trace(kineto_results: Any, path: Path, compresslevel: int = 1) -> float:
    """Write the profiler's results as a Chrome trace at ``path`` (``.json`` or ``.json.gz``).

    Returns the seconds it took. The file appears atomically (written under a temporary name,
    then renamed), so a reader never sees half a trace.
    """
    t0 = time.perf_counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_json = path.with_name(path.name + ".tmp.json")
    kineto_results.save(str(tmp_json))
    if path.name.endswith(".gz"):
        tmp_gz = path.with_name(path.name + ".tmp")
        with (
            open(tmp_json, "rb") as src,
            gzip.open(tmp_gz, "wb", compresslevel=compresslevel) as dst,
        ):
            shutil.copyfileobj(src, dst, length=16 << 20)
        os.replace(tmp_gz, path)
        os.unlink(tmp_json)
    else:
        os.replace(tmp_json, path)
    return time.perf_counter() - t0


class ProfilerSession:
    """One ``torch.profiler.profile`` over ``active_steps`` steps that writes ``path`` when done.

    Use :meth:`start`, then :meth:`step` after each profiled step, then :meth:`stop` (always,
    also after a failure: the trace recorded so far is then written as a partial trace).
    """

    def __init__(self, path: Path, active_steps: int, cuda: bool) -> None:
        self.path = path
        self.active_steps = max(1, active_steps)
        self.cuda = cuda
        self.written: Path | None = None
        self.write_s: float | None = None
        self.stop_s: float | None = None
        self.figures: dict[str, dict[str, Any]] = {}
        self.error: str | None = None
        self.figures_s: float | None = None
        self._prof: Any = None

    def start(self) -> None:
        """Start recording (the first step after this is recorded)."""
        import torch

        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with warnings.catch_warnings():
            # "Profiler won't be using warmup": the Runner's warm-ups ran before it.
            warnings.simplefilter("ignore")
            self._prof = torch.profiler.profile(
                activities=activities,
                schedule=torch.profiler.schedule(
                    wait=0, warmup=0, active=self.active_steps, repeat=1
                ),
                on_trace_ready=self._on_trace_ready,
                record_shapes=True,
                profile_memory=True,
                with_stack=False,
            )
            self._prof.start()

    def step(self) -> None:
        """Mark the end of one profiled step."""
        if self._prof is not None:
            self._prof.step()

    def stop(self) -> None:
        """Stop recording and write what was recorded (idempotent)."""
        prof, self._prof = self._prof, None
        if prof is None:
            return
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prof.stop()
        self.stop_s = time.perf_counter() - t0 - (self.write_s or 0.0)

    def _on_trace_ready(self, prof: Any) -> None:
        results = prof.profiler.kineto_results
        if results is None:
            return
        t0 = time.perf_counter()
        try:
            # GPU figures only where there is a GPU: zeros on the CPU would be fake figures.
            self.figures = strategy_figures(results.events()) if self.cuda else {}
        except Exception as exc:  # figures are a bonus; the trace matters more
            self.error = f"per-strategy figures failed: {exc}"
        self.figures_s = time.perf_counter() - t0
        self.write_s = write_trace(results, self.path)
        self.written = self.path


def _union_ns(intervals: list[tuple[int, int]]) -> int:
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s  # type: ignore[operator]
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s  # type: ignore[operator]
    return total


def _intersection_ns(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Time covered by both interval sets (each is merged first)."""

    def merged(x: list[tuple[int, int]]) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for s, e in sorted(x):
            if out and s <= out[-1][1]:
                if e > out[-1][1]:
                    out[-1] = (out[-1][0], e)
            else:
                out.append((s, e))
        return out

    ma, mb = merged(a), merged(b)
    i = j = 0
    total = 0
    while i < len(ma) and j < len(mb):
        s = max(ma[i][0], mb[j][0])
        e = min(ma[i][1], mb[j][1])
        if e > s:
            total += e - s
        if ma[i][1] < mb[j][1]:
            i += 1
        else:
            j += 1
    return total


def _multi_stream_ns(by_stream: dict[int, list[tuple[int, int]]]) -> int:
    """Time during which kernels of two or more streams run at once."""
    edges: list[tuple[int, int]] = []
    for ivs in by_stream.values():
        # merge per stream so one stream's overlapping kernels count once
        cur: list[tuple[int, int]] = []
        for s, e in sorted(ivs):
            if cur and s <= cur[-1][1]:
                cur[-1] = (cur[-1][0], max(cur[-1][1], e))
            else:
                cur.append((s, e))
        for s, e in cur:
            edges.append((s, 1))
            edges.append((e, -1))
    edges.sort()
    total = 0
    depth = 0
    last = 0
    for t, d in edges:
        if depth >= 2:
            total += t - last
        depth += d
        last = t
    return total


def strategy_figures(events: Any) -> dict[str, dict[str, Any]]:
    """Per-strategy GPU figures of a profiled window, from Kineto's events.

    A GPU activity belongs to the strategy whose ``gpuviz/<label>#<step>`` range (on the CPU)
    contains its start. That is exact here because every profiled step synchronizes the device
    before its range ends, so all the work it launched runs inside it. Returns, per label:
    ``launches`` (kernels per profiled step), ``kernels``, ``memcpy``, ``gpu_busy_us`` (union of
    kernel/copy/set time), ``gpu_span_us`` (first start to last end, within a step),
    ``idle_share`` (the share of that span with no GPU activity: the gaps between launches),
    ``streams`` (streams with kernels), ``compute_copy_us`` and ``multi_stream_us``.
    """
    import bisect

    ranges: list[tuple[int, int, str]] = []
    gpu: list[tuple[int, int, int, str]] = []  # start, end, stream, kind
    for e in events:
        if str(e.device_type()).endswith("CPU"):
            if e.is_user_annotation():
                name = e.name()
                if name.startswith(STEP_PREFIX):
                    ranges.append(
                        (e.start_ns(), e.end_ns(), name[len(STEP_PREFIX) :].rsplit("#", 1)[0])
                    )
            continue
        name = e.name()
        if name.startswith(STEP_PREFIX):
            continue  # the gpu_user_annotation copy of our own range
        kind = (
            "memcpy"
            if name.startswith("Memcpy")
            else "memset"
            if name.startswith("Memset")
            else "kernel"
        )
        gpu.append((e.start_ns(), e.end_ns(), e.device_resource_id(), kind))
    ranges.sort()
    starts = [r[0] for r in ranges]
    per_step: list[list[tuple[int, int, int, str]]] = [[] for _ in ranges]
    for act in gpu:
        i = bisect.bisect_right(starts, act[0]) - 1
        if i >= 0 and act[0] <= ranges[i][1]:
            per_step[i].append(act)
    out: dict[str, dict[str, Any]] = {}
    for (_s, _e, label), acts in zip(ranges, per_step):
        kernels = [(s, e, st) for s, e, st, k in acts if k == "kernel"]
        copies = [(s, e) for s, e, _st, k in acts if k == "memcpy"]
        busy = _union_ns([(s, e) for s, e, _st, _k in acts])
        span = (
            (max(e for _s2, e, _st, _k in acts) - min(s for s, _e2, _st, _k in acts)) if acts else 0
        )
        by_stream: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for s, e, st in kernels:
            by_stream[st].append((s, e))
        fig = out.setdefault(
            label,
            {
                "profiled_steps": 0,
                "kernels": 0,
                "memcpy": 0,
                "gpu_busy_ns": 0,
                "gpu_span_ns": 0,
                "streams": set(),
                "compute_copy_ns": 0,
                "multi_stream_ns": 0,
            },
        )
        fig["profiled_steps"] += 1
        fig["kernels"] += len(kernels)
        fig["memcpy"] += len(copies)
        fig["gpu_busy_ns"] += busy
        fig["gpu_span_ns"] += span
        fig["streams"].update(by_stream)
        fig["compute_copy_ns"] += _intersection_ns([(s, e) for s, e, _ in kernels], copies)
        fig["multi_stream_ns"] += _multi_stream_ns(by_stream)
    result: dict[str, dict[str, Any]] = {}
    for label, f in out.items():
        n = f["profiled_steps"]
        result[label] = {
            "profiled_steps": n,
            "launches": round(f["kernels"] / n),
            "memcpy": round(f["memcpy"] / n),
            "gpu_busy_us": f["gpu_busy_ns"] / n / 1e3,
            "gpu_span_us": f["gpu_span_ns"] / n / 1e3,
            "idle_share": (1.0 - f["gpu_busy_ns"] / f["gpu_span_ns"])
            if f["gpu_span_ns"] > 0
            else None,
            "streams": len(f["streams"]),
            "compute_copy_us": f["compute_copy_ns"] / n / 1e3,
            "multi_stream_us": f["multi_stream_ns"] / n / 1e3,
        }
    return result
