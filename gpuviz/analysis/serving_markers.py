"""Which ranges of a serving trace are its steps (see :mod:`gpuviz.analysis.serving_steps`).

:func:`serving_markers` finds, per rank, the first of: the engine's step annotations, its step
function in the Python stack, or the top-level module calls inside Hugging Face ``generate()``.
It imports nothing of :mod:`gpuviz.analysis.steps`, which calls it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.names import name_mask
from gpuviz.analysis.serving_annotations import parse_step
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]
SOURCES = ("vLLM", "SGLang", "ATOM", "TGI", "generate")
"""Step sources of serving traces (see :data:`gpuviz.analysis.steps.SOURCES`)."""

VLLM_EXECUTE = re.compile(r".*vllm/.*\): execute_model$")
SGLANG_FORWARD = re.compile(r".*sglang/.*\): forward_batch_generation$")
TGI_STEP = re.compile(r".*text_generation_server/.*\): generate_token$")
HF_GENERATE = re.compile(r".*generation/utils\.py\(\d+\): generate$")
MODULE = "nn.Module: "
GRAPH_LAUNCH = re.compile(r"^(cuda|hip)GraphLaunch")


def cpu_rows(trace: Trace, kind: Kind, mask: npt.NDArray[np.bool_]) -> I64:
    """Rows of one kind on CPU tracks whose name is in ``mask``, by start."""
    s, t = trace.slices, trace.tracks
    cpu = np.isin(t.kind, [int(TrackKind.CPU_THREAD), int(TrackKind.CPU_ANNOTATION)])
    rows = np.flatnonzero((s.kind == kind) & cpu[s.track])
    rows = rows[mask[s.name[rows]]]
    return rows[np.argsort(s.start_ns[rows], kind="stable")]


def by_rank(trace: Trace, rows: I64) -> dict[int, I64]:
    rank = trace.tracks.rank[trace.slices.track[rows]].astype(np.int64)
    return {int(r): rows[rank == r] for r in unique(rank).tolist()}


def outermost(trace: Trace, rows: I64) -> I64:
    """The rows (by start) not inside an earlier one: top-level calls of one thread."""
    s = trace.slices
    keep: list[int] = []
    end = np.iinfo(np.int64).min
    for r in rows.tolist():
        if int(s.start_ns[r]) >= end:
            keep.append(r)
            end = int(s.start_ns[r] + s.dur_ns[r])
    return np.array(keep, dtype=np.int64)


def serving_markers(trace: Trace) -> dict[int, tuple[I64, str]]:
    """Per rank, the rows of its serving steps' ranges and their source (see the module).

    Ranks without any are left out. Nested or repeated annotations are returned as they are;
    :func:`gpuviz.analysis.steps.find_steps` merges ranges that overlap into one step.
    """
    sym = trace.symbols
    out: dict[int, tuple[I64, str]] = {}
    parsed = {i: parse_step(n) for i, n in enumerate(sym.strings) if maybe_step(n)}
    ann = np.zeros(len(sym), dtype=bool)
    ann[[i for i, a in parsed.items() if a is not None]] = True
    # Each look over the slices only where the symbols hold a name it looks for: a training
    # trace (none of them) pays a pass over its symbols, not over its slices.
    found = cpu_rows(trace, Kind.USER_ANNOTATION, ann) if ann.any() else np.empty(0, np.int64)
    for rank, rows in by_rank(trace, found).items():
        frameworks = {getattr(parsed[int(n)], "framework", "") for n in trace.slices.name[rows]}
        source = next(f for f in ("SGLang", "ATOM", "vLLM") if f in frameworks)
        out[rank] = (rows, source)
    for pattern, source in ((VLLM_EXECUTE, "vLLM"), (SGLANG_FORWARD, "SGLang"), (TGI_STEP, "TGI")):
        mask = name_mask(sym, _matcher(pattern))
        if not mask.any():
            continue
        for rank, rows in by_rank(trace, cpu_rows(trace, Kind.PYTHON_FUNCTION, mask)).items():
            out.setdefault(rank, (outermost(trace, rows), source))
    gen = name_mask(sym, _matcher(HF_GENERATE))
    if gen.any():
        module = name_mask(sym, lambda n: n.startswith(MODULE))
        mods = by_rank(trace, cpu_rows(trace, Kind.PYTHON_FUNCTION, module))
        for rank, calls in by_rank(trace, cpu_rows(trace, Kind.PYTHON_FUNCTION, gen)).items():
            if rank in out or rank not in mods:
                continue
            fwd = _inside(trace, mods[rank], outermost(trace, calls))
            if fwd.size:
                out[rank] = (fwd, "generate")
    return out


def _matcher(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda name: pattern.match(name) is not None


def maybe_step(name: str) -> bool:
    """A cheap test before the parse (every symbol of the trace goes through it)."""
    return name.startswith(("execute_", "step[", "prefill[", "decode["))


def _inside(trace: Trace, rows: I64, outer: I64) -> I64:
    """The top-level rows among those that start inside one of the ``outer`` ranges (of the
    same thread)."""
    s = trace.slices
    o0 = s.start_ns[outer]
    o1 = o0 + s.dur_ns[outer]
    at = np.searchsorted(o0, s.start_ns[rows], side="right") - 1
    ok = (at >= 0) & (s.start_ns[rows] < o1[np.maximum(at, 0)])
    ok &= s.track[rows] == s.track[outer[np.maximum(at, 0)]]
    return outermost(trace, rows[ok])
