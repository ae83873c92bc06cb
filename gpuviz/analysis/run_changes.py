"""What changed between two runs of one job, per step: the verdict ``gpuviz check`` opens with.

A comparison by total time per name ranks ops by host time and lists findings; it missed a
run whose input copy went from pinned to pageable memory and that gained a ``loss.item()``
each step ("new findings: none"). An expert asks, in order: is the GPU work the same, kernel
for kernel? If so, the change is the host's: how many more times a step does it wait for the
GPU, which copies changed kind, which ops are called more or less often? So
:func:`run_changes` counts, per step of each run (events whose host time lies in a step's CPU
range; a GPU activity by its launch's host time, else its own start in the step's window):

- **kernels**: calls per step of each kernel name, and their time;
- **host syncs**: the places a host thread waits for the GPU: the runtime's blocking calls
  (:data:`~gpuviz.analysis.names.SYNC_CALLS`: ``cudaDeviceSynchronize``,
  ``cudaStreamSynchronize``, ``cudaEventSynchronize``, ``cudaMemcpy`` …), ``aten::item`` /
  ``aten::_local_scalar_dense`` (``.item()``, ``bool(t)``, ``print(t)``) of a GPU tensor (a
  runtime call inside them), and copies from the device to pageable memory (blocking whatever
  the call). A sync inside another on the same thread (``aten::item`` >
  ``aten::_local_scalar_dense`` > ``cudaStreamSynchronize``) is one sync, named by the
  outermost; the runtime calls of one op (``.cpu()``'s ``aten::copy_``: a copy, then a
  wait) are one sync, named ``op (call)``;
- **copies**: count and bytes per step of each copy kind, as named (``… (Pinned -> Device)``);
  **op calls**: calls per step of each PyTorch op;
- **values read to Python** without a sync: ``aten::item`` with no runtime call inside (a
  CPU tensor's value; on a CPU-only run the only kind there is).

:class:`RunChanges` holds both runs' figures and what changed; ``verdict`` says it in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.names import SYNC_CALLS, is_pytorch_op, name_mask
from gpuviz.trace.model import Kind, Trace

SCALAR_OPS = frozenset({"aten::item", "aten::_local_scalar_dense"})
"""Ops that hand a tensor's value to Python: a sync where the tensor is on a GPU."""
PAGEABLE_READBACK = "DtoH copy to pageable memory"
"""The name a blocking device-to-host copy's launch is counted under."""
SAME_STEP = 0.01
"""A step time change below this share (1%) is "the same"."""

Rows = npt.NDArray[np.int64]


@dataclass(frozen=True)
class PerStep:
    """One name's count (and bytes) per step in the baseline (A) and the new run (B).

    Attributes
    ----------
    name : str
    a, b : float
        Calls per step.
    bytes_a, bytes_b : float or None
        Bytes per step (copies; None for other kinds).
    """

    name: str
    a: float
    b: float
    bytes_a: float | None = None
    bytes_b: float | None = None

    @property
    def changed(self) -> bool:
        """Whether the count per step differs (by more than rounding)."""
        return abs(self.b - self.a) > 1e-9

    def to_json(self) -> dict[str, Any]:
        """``{name, baseline_per_step, new_per_step[, baseline_bytes_per_step, …]}``."""
        out: dict[str, Any] = {
            "name": self.name,
            "baseline_per_step": _r(self.a),
            "new_per_step": _r(self.b),
        }
        if self.bytes_a is not None or self.bytes_b is not None:
            out["baseline_bytes_per_step"] = _r(self.bytes_a or 0.0)
            out["new_bytes_per_step"] = _r(self.bytes_b or 0.0)
        return out


@dataclass(frozen=True)
class StepCounts:
    """One run's counts over its steps (see the module docstring).

    Attributes
    ----------
    steps : int
    step_ns : float
        The mean step time.
    kernels : dict of str to (int, int)
        Kernel name -> (calls, total ns) in the steps.
    syncs : dict of str to int
        The outermost sync's name -> how many.
    copies : dict of str to (int, int)
        Copy name -> (count, bytes).
    ops : dict of str to int
        PyTorch op -> calls.
    reads : dict of str to int
        Values read to Python without a sync (``aten::item`` of a CPU tensor) -> how many.
    devices : tuple of str
        The GPU names of its files' ``deviceProperties`` (empty where none).
    """

    steps: int
    step_ns: float
    kernels: dict[str, tuple[int, int]] = field(default_factory=dict)
    syncs: dict[str, int] = field(default_factory=dict)
    copies: dict[str, tuple[int, int]] = field(default_factory=dict)
    ops: dict[str, int] = field(default_factory=dict)
    reads: dict[str, int] = field(default_factory=dict)
    devices: tuple[str, ...] = ()

    @property
    def kernel_calls(self) -> float:
        """Kernels a step."""
        return sum(c for c, _ in self.kernels.values()) / max(self.steps, 1)

    @property
    def kernel_ns(self) -> float:
        """Kernel time a step (summed over GPUs)."""
        return sum(t for _, t in self.kernels.values()) / max(self.steps, 1)

    @property
    def sync_count(self) -> float:
        """Host syncs a step."""
        return sum(self.syncs.values()) / max(self.steps, 1)

    @property
    def read_count(self) -> float:
        """Values read to Python without a sync, a step."""
        return sum(self.reads.values()) / max(self.steps, 1)


@dataclass(frozen=True)
class RunChanges:
    """The per-step differences of two runs (A: baseline, B: new).

    Attributes
    ----------
    a, b : StepCounts
    kernels : list of PerStep
        Kernel names whose calls per step changed (new and gone ones included), largest
        change first.
    syncs : list of PerStep
        Host syncs per step by name, of either run.
    copies : list of PerStep
        Copies per step by kind, of either run (bytes too).
    ops : list of PerStep
        Ops whose calls per step changed, largest change first.
    reads : list of PerStep
        Values read to Python without a sync per step by name, of either run.
    """

    a: StepCounts
    b: StepCounts
    kernels: list[PerStep]
    syncs: list[PerStep]
    copies: list[PerStep]
    ops: list[PerStep]
    reads: list[PerStep] = field(default_factory=list)

    @property
    def gpu_work_same(self) -> bool:
        """Whether both runs launch the same kernels, as often a step (their time may differ)."""
        return not self.kernels and self.a.kernel_calls > 0

    @property
    def step_change(self) -> float | None:
        """B's mean step over A's, minus 1; None where A has none."""
        return self.b.step_ns / self.a.step_ns - 1.0 if self.a.step_ns > 0 else None

    def verdict(self) -> str:
        """One line, cause before symptom: the GPU work, the step time, then what changed on
        the host (syncs, copies, op calls per step)."""
        a, b = self.a, self.b
        parts = []
        if a.devices and b.devices and a.devices != b.devices:
            # Kernels and times of two kinds of GPU differ for that alone: say it first.
            parts.append(f"on other GPUs ({', '.join(a.devices)} -> {', '.join(b.devices)})")
        if self.gpu_work_same:
            parts.append(
                f"GPU work the same kernel for kernel ({_count(a.kernel_calls, 'kernel')} a step, "
                f"their time {_change(a.kernel_ns, b.kernel_ns)})"
            )
        elif a.kernel_calls == 0 and b.kernel_calls == 0:
            parts.append("no GPU kernels in either run")
        else:
            new = sum(1 for k in self.kernels if k.a == 0)
            gone = sum(1 for k in self.kernels if k.b == 0)
            other = len(self.kernels) - new - gone
            said = [f"{n} {w}" for n, w in ((new, "new"), (gone, "gone"),
                                            (other, "called more or less often")) if n]  # fmt: skip
            parts.append(
                f"GPU work changed: kernel names {', '.join(said)}; kernels a step "
                f"{a.kernel_calls:g} -> {b.kernel_calls:g}, their time "
                f"{_change(a.kernel_ns, b.kernel_ns)}"
            )
        step = self.step_change
        if step is not None:
            who = "host" if self.gpu_work_same else "step"
            if abs(step) < SAME_STEP:
                how = f"{who} time the same"
            else:
                how = f"{who} {100 * abs(step):.1f}% {'slower' if step > 0 else 'faster'}"
            parts.append(f"{how} (mean step {a.step_ns / 1e6:.3f} -> {b.step_ns / 1e6:.3f} ms)")
        host = []
        if abs(b.sync_count - a.sync_count) > 1e-9:
            names = ", ".join(s.name for s in self.syncs if s.changed)
            host.append(f"host syncs a step {a.sync_count:g} -> {b.sync_count:g} ({names})")
        if abs(b.read_count - a.read_count) > 1e-9:
            names = ", ".join(r.name for r in self.reads if r.changed)
            host.append(
                f"values read to Python (no GPU sync) a step {a.read_count:g} -> "
                f"{b.read_count:g} ({names})"
            )
        host += _copy_moves([c for c in self.copies if c.changed])
        if self.ops:
            host.append(f"{len(self.ops)} ops called more or less often a step")
        line = "; ".join(parts)
        return line + (": " + "; ".join(host) if host else "; nothing else changed per step")

    def to_json(self, top: int = 15) -> dict[str, Any]:
        """``{verdict, gpu_work_same, steps, kernels_per_step, kernel_us_per_step,
        kernel_calls, host_syncs_per_step, reads_per_step, copies, op_calls}`` (lists of changes: the ``top``
        largest)."""
        a, b = self.a, self.b
        return {
            "verdict": self.verdict(),
            "gpu_work_same": self.gpu_work_same,
            "steps": {"baseline": a.steps, "new": b.steps},
            "devices": {"baseline": list(a.devices), "new": list(b.devices)},
            "kernels_per_step": {"baseline": _r(a.kernel_calls), "new": _r(b.kernel_calls)},
            "kernel_us_per_step": {
                "baseline": _r(a.kernel_ns / 1000.0),
                "new": _r(b.kernel_ns / 1000.0),
            },
            "kernel_calls": [k.to_json() for k in self.kernels[:top]],
            "host_syncs_per_step": {
                "baseline": _r(a.sync_count),
                "new": _r(b.sync_count),
                "by_name": [s.to_json() for s in self.syncs],
            },
            "reads_per_step": {
                "baseline": _r(a.read_count),
                "new": _r(b.read_count),
                "by_name": [r.to_json() for r in self.reads],
            },
            "copies": [c.to_json() for c in self.copies],
            "op_calls": [o.to_json() for o in self.ops[:top]],
        }


def _copy_moves(moved: list[PerStep]) -> list[str]:
    """The copies that changed, in words: ``HtoD copies pinned -> pageable`` where one kind's
    copies of a direction went to the other, then the rest by name."""
    out = []
    left = list(moved)
    for direction in ("HtoD", "DtoH"):
        of = {m: next((c for c in left if direction in c.name and m in c.name), None)
              for m in ("Pinned", "Pageable")}  # fmt: skip
        pin, pag = of["Pinned"], of["Pageable"]
        if pin is None or pag is None or (pin.b - pin.a) * (pag.b - pag.a) >= 0:
            continue
        src, dst = ("pinned", "pageable") if pin.b < pin.a else ("pageable", "pinned")
        out.append(f"{direction} copies {src} -> {dst}")
        left = [c for c in left if c is not pin and c is not pag]
    if left:
        out.append(
            "copies a step "
            + ", ".join(f"{c.name} {c.a:g} -> {c.b:g}" for c in left[:3])
            + (f" and {len(left) - 3} more" if len(left) > 3 else "")
        )
    return out


def _count(x: float, what: str) -> str:
    return f"{x:g} {what}" + ("" if x == 1 else "s")


def _r(x: float) -> float:
    return round(float(x), 4)


def _change(a: float, b: float) -> str:
    if a <= 0:
        return "unchanged" if b <= 0 else "new"
    return f"{100 * (b / a - 1.0):+.1f}%"


def run_changes(a: Trace, steps_a: Any, b: Trace, steps_b: Any) -> RunChanges:
    """Compare two runs per step.

    Parameters
    ----------
    a, b : Trace
        The baseline and the new run.
    steps_a, steps_b : Steps
        Their steps (:class:`~gpuviz.analysis.steps.Steps`: the CPU range of each for host
        events, the window for GPU work without a launch).
    """
    return changes_of(step_counts(a, steps_a), step_counts(b, steps_b))


def changes_of(ca: StepCounts, cb: StepCounts) -> RunChanges:
    """:func:`run_changes` of two runs' :func:`step_counts` (or ranks' summed: compare_parts)."""

    def per_step(da: dict[str, Any], db: dict[str, Any], with_bytes: bool = False) -> list[PerStep]:
        out = []
        for name in sorted(set(da) | set(db)):
            xa, xb = (
                da.get(name, (0, 0) if with_bytes else 0),
                db.get(name, (0, 0) if with_bytes else 0),
            )
            if with_bytes:
                out.append(PerStep(name, xa[0] / max(ca.steps, 1), xb[0] / max(cb.steps, 1),
                                   xa[1] / max(ca.steps, 1), xb[1] / max(cb.steps, 1)))  # fmt: skip
            else:
                out.append(PerStep(name, xa / max(ca.steps, 1), xb / max(cb.steps, 1)))
        return out

    def changed(rows: list[PerStep]) -> list[PerStep]:
        return sorted((r for r in rows if r.changed), key=lambda r: (-abs(r.b - r.a), r.name))

    kernels = changed(
        per_step(
            {k: c for k, (c, _) in ca.kernels.items()}, {k: c for k, (c, _) in cb.kernels.items()}
        )
    )
    return RunChanges(
        a=ca,
        b=cb,
        kernels=kernels,
        syncs=sorted(per_step(ca.syncs, cb.syncs), key=lambda r: (-max(r.a, r.b), r.name)),
        copies=sorted(per_step(ca.copies, cb.copies, True), key=lambda r: (-max(r.a, r.b), r.name)),
        ops=changed(per_step(ca.ops, cb.ops)),
        reads=sorted(per_step(ca.reads, cb.reads), key=lambda r: (-max(r.a, r.b), r.name)),
    )


def step_counts(trace: Trace, steps: Any) -> StepCounts:
    """One run's :class:`StepCounts` over ``steps``."""
    s = trace.slices
    n = len(steps)
    step_ns = float(np.asarray(steps.duration_ns).sum()) / n if n else 0.0
    devices = _devices(trace)
    if n == 0 or len(s) == 0:
        return StepCounts(steps=n, step_ns=step_ns, devices=devices)
    symbols = trace.symbols
    kind = np.asarray(s.kind)
    name = np.asarray(s.name)
    launch = _launch_rows(trace)
    inside = _in_steps(trace, steps, _host_times(trace, launch), launch)

    def rows_of(k: Kind, mask: npt.NDArray[np.bool_] | None = None) -> Rows:
        m = (kind == k) & inside
        if mask is not None:
            m &= mask[name]
        return np.flatnonzero(m)

    kernels = _by_name(trace, rows_of(Kind.KERNEL), weights=np.asarray(s.dur_ns))
    copy_rows = rows_of(Kind.MEMCPY)
    nbytes = np.asarray(s.bytes)[copy_rows].astype(np.int64)
    copies = _by_name(trace, copy_rows, weights=None, extra=np.where(nbytes > 0, nbytes, 0))
    ops = {
        k: c
        for k, (c, _) in _by_name(
            trace, rows_of(Kind.CPU_OP, name_mask(symbols, is_pytorch_op))
        ).items()
    }
    syncs, reads = _syncs(trace, inside, launch)
    return StepCounts(
        steps=n,
        step_ns=step_ns,
        kernels=kernels,
        syncs=syncs,
        copies=copies,
        ops=ops,
        reads=reads,
        devices=devices,
    )


def _devices(trace: Trace) -> tuple[str, ...]:
    """The distinct GPU names of the trace's files' ``deviceProperties``, sorted."""
    names = set()
    for info in trace.ranks:
        props = info.metadata.get("deviceProperties")
        if isinstance(props, list):
            names |= {str(d["name"]) for d in props if isinstance(d, dict) and d.get("name")}
    return tuple(sorted(names))


def _by_name(
    trace: Trace,
    rows: Rows,
    weights: npt.NDArray[Any] | None = None,
    extra: npt.NDArray[Any] | None = None,
) -> dict[str, tuple[int, int]]:
    """Name -> (count, summed ``weights[rows]`` or ``extra``) of ``rows``."""
    if not len(rows):
        return {}
    ids, inverse = np.unique(np.asarray(trace.slices.name)[rows], return_inverse=True)
    count = np.bincount(inverse, minlength=len(ids))
    values = extra if extra is not None else (weights[rows] if weights is not None else None)
    total = np.zeros(len(ids), dtype=np.int64)
    if values is not None:
        np.add.at(total, inverse, np.asarray(values, dtype=np.int64))
    names = trace.symbols.lookup(ids)
    return {nm: (int(c), int(t)) for nm, c, t in zip(names, count, total)}


def _rank_of_rows(trace: Trace) -> npt.NDArray[np.int64]:
    return np.asarray(trace.tracks.rank, dtype=np.int64)[np.asarray(trace.slices.track)]


def _launch_rows(trace: Trace) -> npt.NDArray[np.int64]:
    """For each slice, the row of the runtime call with its (rank, correlation); -1 if none."""
    s = trace.slices
    kind = np.asarray(s.kind)
    corr = np.asarray(s.correlation, dtype=np.int64)
    rank = _rank_of_rows(trace)
    key = (rank + 1) << 40 | np.where(corr >= 0, corr, 0)
    launches = np.flatnonzero((kind == Kind.RUNTIME) & (corr >= 0))
    out = np.full(len(kind), -1, dtype=np.int64)
    if not len(launches):
        return out
    order = np.argsort(key[launches], kind="stable")
    keys = key[launches][order]
    gpu = np.flatnonzero(np.isin(kind, (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET)) & (corr >= 0))
    at = np.searchsorted(keys, key[gpu])
    ok = at < len(keys)
    ok[ok] = keys[at[ok]] == key[gpu][ok]
    out[gpu[ok]] = launches[order][at[ok]]
    return out


def _host_times(trace: Trace, launch: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Each slice's host time: its launch's start (``launch``: :func:`_launch_rows`) for
    GPU work launched in the trace, else its own start."""
    start = np.asarray(trace.slices.start_ns, dtype=np.int64)
    out = start.copy()
    has = launch >= 0
    out[has] = start[launch[has]]
    return out


def _in_steps(
    trace: Trace, steps: Any, host_time: npt.NDArray[np.int64], launch: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Whether each slice of a kind counted here belongs to a step of its rank: a host event
    (or a launched GPU activity, by its launch) inside the step's CPU range; GPU work without
    a launch inside the step's window."""
    s = trace.slices
    kind = np.asarray(s.kind)
    inside = np.zeros(len(kind), dtype=bool)
    counted = (Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.CPU_OP, Kind.RUNTIME)
    rows_all = np.flatnonzero(np.isin(kind, counted))
    # Rows grouped by rank once (a 64-rank folder: one pass, not one per rank).
    rank = _rank_of_rows(trace)[rows_all]
    by_rank = np.argsort(rank, kind="stable")
    rows_all, rank = rows_all[by_rank], rank[by_rank]
    by_window = np.isin(kind[rows_all], counted[:3]) & (launch[rows_all] < 0)
    st_rank = np.asarray(steps.rank, dtype=np.int64)
    for r in np.unique(st_rank).tolist():
        mine = st_rank == r
        lo_i, hi_i = np.searchsorted(rank, r, "left"), np.searchsorted(rank, r, "right")
        for lo_col, hi_col, window in (("cpu_start_ns", "cpu_end_ns", False),
                                       ("start_ns", "end_ns", True)):  # fmt: skip
            lo = np.asarray(getattr(steps, lo_col), dtype=np.int64)[mine]
            hi = np.asarray(getattr(steps, hi_col), dtype=np.int64)[mine]
            order = np.argsort(lo, kind="stable")
            lo, hi = lo[order], hi[order]
            rows = rows_all[lo_i:hi_i][by_window[lo_i:hi_i] == window]
            t = host_time[rows]
            at = np.searchsorted(lo, t, side="right") - 1
            ok = at >= 0
            ok[ok] = t[ok] < hi[at[ok]]
            inside[rows[ok]] = True
    return inside


def _syncs(
    trace: Trace, inside: npt.NDArray[np.bool_], launch: npt.NDArray[np.int64]
) -> tuple[dict[str, int], dict[str, int]]:
    """The outermost host syncs of the steps by name, and the values read to Python there
    without a sync (``aten::item`` of a CPU tensor: no runtime call inside), by name."""
    s = trace.slices
    symbols = trace.symbols
    kind = np.asarray(s.kind)
    name = np.asarray(s.name)
    blocking = name_mask(symbols, lambda n: n in SYNC_CALLS)
    scalar = name_mask(symbols, lambda n: n in SCALAR_OPS)
    readback = name_mask(symbols, lambda n: "DtoH" in n and "Pageable" in n)
    # A device-to-host copy into pageable memory blocks its launching thread.
    copies = np.flatnonzero((kind == Kind.MEMCPY) & readback[name])
    readback_launch = launch[copies]
    is_readback = np.zeros(len(kind), dtype=bool)
    is_readback[readback_launch[readback_launch >= 0]] = True
    # .item() of a GPU tensor copies and waits (runtime calls inside it); of a CPU one, not.
    scalars = _outermost(trace, np.flatnonzero((kind == Kind.CPU_OP) & scalar[name] & inside))
    waits = _wraps(trace, scalars, np.flatnonzero(kind == Kind.RUNTIME))
    cand = ((kind == Kind.RUNTIME) & (blocking[name] | is_readback)) & inside
    rows = np.union1d(np.flatnonzero(cand), scalars[waits])

    def named(r: int) -> str:
        if is_readback[r] and not blocking[name[r]]:
            return PAGEABLE_READBACK
        return str(symbols[int(name[r])])

    syncs: dict[str, int] = {}
    seen: set[int] = set()
    cpu_ops = np.flatnonzero(kind == Kind.CPU_OP)
    outer = _outermost(trace, rows)
    within = _innermost_op(trace, outer, cpu_ops)
    for r, op in zip(outer.tolist(), within.tolist()):
        if kind[r] == Kind.RUNTIME and op >= 0:
            # ``.cpu()``: one copy_ op that launches the copy and then waits: one sync.
            if op in seen:
                continue
            seen.add(op)
            label = f"{symbols[int(name[op])]} ({named(r)})"
        else:
            label = named(r)
        syncs[label] = syncs.get(label, 0) + 1
    reads: dict[str, int] = {}
    for r in scalars[~waits].tolist():
        reads[named(r)] = reads.get(named(r), 0) + 1
    return syncs, reads


def _outermost(trace: Trace, rows: Rows) -> Rows:
    """The rows of ``rows`` not inside another of them on the same track (few rows)."""
    if not len(rows):
        return rows
    s = trace.slices
    track = np.asarray(s.track)[rows]
    start = np.asarray(s.start_ns, dtype=np.int64)[rows]
    end = start + np.asarray(s.dur_ns, dtype=np.int64)[rows]
    keep = []
    cur_track, cur_end = -1, -1
    for i in np.lexsort((-end, start, track)).tolist():
        if track[i] == cur_track and start[i] < cur_end:
            continue  # inside an outer one on this thread: the same wait
        cur_track, cur_end = int(track[i]), int(end[i])
        keep.append(int(rows[i]))
    return np.asarray(sorted(keep), dtype=np.int64)


def _innermost_op(trace: Trace, rows: Rows, ops: Rows, back: int = 256) -> Rows:
    """For each of ``rows``, the innermost of ``ops`` around it on its track (-1: none;
    looked for among the ``back`` ops that start last before it)."""
    out = np.full(len(rows), -1, dtype=np.int64)
    if not len(rows) or not len(ops):
        return out
    s = trace.slices
    track = np.asarray(s.track)
    start = np.asarray(s.start_ns, dtype=np.int64)
    end = start + np.asarray(s.dur_ns, dtype=np.int64)
    for t in np.unique(track[rows]).tolist():
        mine = ops[track[ops] == t]
        mine = mine[np.argsort(start[mine], kind="stable")]
        starts = start[mine]
        for i in np.flatnonzero(track[rows] == t).tolist():
            r = int(rows[i])
            at = int(np.searchsorted(starts, start[r], side="right"))
            for j in range(at - 1, max(at - 1 - back, -1), -1):
                if end[mine[j]] >= end[r] and int(mine[j]) != r:
                    out[i] = int(mine[j])
                    break
    return out


def _wraps(trace: Trace, rows: Rows, inner: Rows) -> npt.NDArray[np.bool_]:
    """Whether each of ``rows`` has a slice of ``inner`` starting inside it on its track."""
    out = np.zeros(len(rows), dtype=bool)
    if not len(rows) or not len(inner):
        return out
    s = trace.slices
    track = np.asarray(s.track)
    start = np.asarray(s.start_ns, dtype=np.int64)
    dur = np.asarray(s.dur_ns, dtype=np.int64)
    inner = inner[np.isin(track[inner], np.unique(track[rows]))]
    for t in np.unique(track[rows]).tolist():
        mine = np.flatnonzero(track[rows] == t)
        starts = np.sort(start[inner[track[inner] == t]])
        lo = start[rows[mine]]
        at = np.searchsorted(starts, lo, side="left")
        ok = at < len(starts)
        ok[ok] = starts[at[ok]] < lo[ok] + dur[rows[mine]][ok]
        out[mine] = ok
    return out


__all__ = ["PerStep", "RunChanges", "StepCounts", "changes_of", "run_changes", "step_counts"]
