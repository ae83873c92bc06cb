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

import os
import struct
import threading
import time
import warnings
import zlib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gpuviz.engine.cupti import release_cupti_after_tracing, teardown_completed

STEP_PREFIX = "gpuviz/"
"""Name prefix of the ``record_function`` range around each profiled step."""


def step_range_name(label: str, step: int) -> str:
    """The ``record_function`` name of a profiled step."""
    return f"{STEP_PREFIX}{label}#{step}"


def gzip_file(src: Path, dst: Path, compresslevel: int = 1, workers: int | None = None) -> None:
    """Compress ``src`` into a single-member gzip file ``dst`` using several threads.

    Like pigz: each 16 MiB chunk is deflated on its own (zlib releases the GIL) and ends with a
    sync flush, so the chunks concatenate into one valid deflate stream; only the last is
    final. Any gzip reader reads the result; the ratio is a little worse than one stream's.
    """
    workers = workers or max(1, min(8, (os.cpu_count() or 2)))
    chunk = 16 << 20

    def deflate(args: tuple[bytes, bool]) -> bytes:
        data, last = args
        c = zlib.compressobj(compresslevel, zlib.DEFLATED, -15, 9)
        return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    size = src.stat().st_size
    crc = 0
    with open(src, "rb") as f, open(dst, "wb") as out, ThreadPoolExecutor(workers) as pool:
        # gzip header: magic, deflate, no flags, mtime 0, no extra flags, OS unknown
        out.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
        pending: list[Any] = []
        offset = 0
        while True:
            data = f.read(chunk)
            offset += len(data)
            last = offset >= size or not data
            crc = zlib.crc32(data, crc)
            pending.append(pool.submit(deflate, (data, last)))
            # keep a bounded window of chunks in flight (memory stays ~ 2 x workers x 16 MiB)
            while len(pending) > 2 * workers:
                out.write(pending.pop(0).result())
            if last:
                break
        for fut in pending:
            out.write(fut.result())
        out.write(struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF))


def write_trace(kineto_results: Any, path: Path, compresslevel: int = 1) -> float:
    """Write the profiler's results as a Chrome trace at ``path`` (``.json`` or ``.json.gz``).

    Kineto saves the JSON (in C++), then :func:`gzip_file` compresses it in parallel. Returns
    the seconds it took. The file appears atomically (written under a temporary name, then
    renamed), so a reader never sees half a trace.
    """
    t0 = time.perf_counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_json = path.with_name(path.name + ".tmp.json")
    kineto_results.save(str(tmp_json))
    if not tmp_json.exists():
        # Kineto logs its own failure and returns: find the cause by writing there (a read-only
        # place was reported as "No such file", the next step's error).
        from gpuviz.engine.writable import probe_folder

        probe_folder(path.parent)
        raise OSError(f"the profiler wrote no file at {tmp_json}")
    if path.name.endswith(".gz"):
        tmp_gz = path.with_name(path.name + ".tmp")
        gzip_file(tmp_json, tmp_gz, compresslevel)
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
        self._busy_s = 0.0
        self._prof: Any = None

    def start(self) -> None:
        """Start recording (the first step after this is recorded)."""
        import torch

        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        # A CPU-only window too: on a CUDA machine it left the later CUDA steps of the process
        # (the app runs workloads one after another in it) 1.28x slower without the teardown.
        release_cupti_after_tracing()
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
        """Mark the end of one profiled step (the last one stops the profiler and writes)."""
        if self._prof is not None:
            t0 = time.perf_counter()
            import torch

            if self._prof.current_action == torch.profiler.ProfilerAction.RECORD_AND_SAVE:
                with teardown_completed():  # this step stops the trace
                    self._prof.step()
            else:
                self._prof.step()
            self._busy_s += time.perf_counter() - t0

    def stop(self) -> None:
        """Stop recording and write what was recorded (idempotent)."""
        prof, self._prof = self._prof, None
        if prof is None:
            return
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with teardown_completed():
                prof.stop()
        self._busy_s += time.perf_counter() - t0
        if self.write_s is not None:
            # what the profiler itself took to stop (collect, correlate), writing aside
            self.stop_s = max(0.0, self._busy_s - self.write_s - (self.figures_s or 0.0))

    def _on_trace_ready(self, prof: Any) -> None:
        results = prof.profiler.kineto_results
        if results is None:
            return
        events = results.events() if self.cuda else None
        writer_error: list[BaseException] = []

        def write() -> None:
            try:
                self.write_s = write_trace(results, self.path)
            except BaseException as exc:  # re-raised below, in the profiler's thread
                writer_error.append(exc)

        # The figures hold the GIL; the compression mostly does not: do both at once.
        t_write = threading.Thread(target=write, name="gpuviz-trace-writer")
        t_write.start()
        t0 = time.perf_counter()
        try:
            # GPU figures only where there is a GPU: zeros on the CPU would be fake figures.
            self.figures = strategy_figures(events) if events is not None else {}
        except Exception as exc:  # figures are a bonus; the trace matters more
            self.error = f"per-strategy figures failed: {exc}"
        self.figures_s = time.perf_counter() - t0
        del events
        t_write.join()
        if writer_error:
            raise writer_error[0]
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


LAUNCH_CALLS = ("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "hipLaunch", "hipGraphLaunch")
"""Runtime-call name prefixes that launch GPU work (one launch each)."""


def strategy_figures(events: Any) -> dict[str, dict[str, Any]]:
    """Per-strategy GPU figures of a profiled window, from Kineto's events.

    GPU activity belongs to the strategy whose ``gpuviz/<label>#<step>`` range (on the CPU)
    contains its start. That is exact here because every profiled step synchronizes the device
    before its range ends, so all the work it launched runs inside it. Returns, per label and
    per profiled step: ``launches`` (CPU launch calls: ``cudaLaunchKernel``, ``cudaGraphLaunch``
    ...), ``kernels`` (kernels that ran: a graph launch runs many), ``memcpy``, ``gpu_busy_us``
    (union of kernel/copy/set time), ``gpu_span_us`` (first start to last end), ``idle_share``
    (the share of that span with no GPU activity: the gaps between launches), ``streams``
    (streams with kernels or copies), ``compute_copy_us`` and ``multi_stream_us``.
    """
    import bisect

    ranges: list[tuple[int, int, str]] = []
    launches: list[int] = []
    gpu: list[tuple[int, int, int, str]] = []  # start, end, stream, kind
    cpu_type: Any = None
    for e in events:
        dt = e.device_type()
        if cpu_type is None and str(dt).endswith("CPU"):
            cpu_type = dt
        name = e.name()
        if dt == cpu_type:
            if name.startswith(STEP_PREFIX):
                if e.is_user_annotation():
                    ranges.append(
                        (e.start_ns(), e.end_ns(), name[len(STEP_PREFIX) :].rsplit("#", 1)[0])
                    )
            elif name.startswith(LAUNCH_CALLS):
                launches.append(e.start_ns())
            continue
        if name == "[memory]" or name.startswith(STEP_PREFIX):
            continue  # allocator events and the GPU copy of our own ranges are not activity
        if str(dt).endswith("CPU"):
            continue
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

    def where(t: int) -> int:
        i = bisect.bisect_right(starts, t) - 1
        return i if i >= 0 and t <= ranges[i][1] else -1

    per_step: list[list[tuple[int, int, int, str]]] = [[] for _ in ranges]
    launch_count = [0] * len(ranges)
    for act in gpu:
        i = where(act[0])
        if i >= 0:
            per_step[i].append(act)
    for t in launches:
        i = where(t)
        if i >= 0:
            launch_count[i] += 1
    out: dict[str, dict[str, Any]] = {}
    for (_s, _e, label), acts, n_launch in zip(ranges, per_step, launch_count):
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
                "launches": 0,
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
        fig["launches"] += n_launch
        fig["kernels"] += len(kernels)
        fig["memcpy"] += len(copies)
        fig["gpu_busy_ns"] += busy
        fig["gpu_span_ns"] += span
        fig["streams"].update(st for _s3, _e3, st, _k in acts)
        fig["compute_copy_ns"] += _intersection_ns([(s, e) for s, e, _ in kernels], copies)
        fig["multi_stream_ns"] += _multi_stream_ns(by_stream)
    result: dict[str, dict[str, Any]] = {}
    for label, f in out.items():
        n = f["profiled_steps"]
        result[label] = {
            "profiled_steps": n,
            "launches": round(f["launches"] / n),
            "kernels": round(f["kernels"] / n),
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
