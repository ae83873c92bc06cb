"""``gpuviz check``'s inputs of a rank folder made one rank at a time: each rank's part, then
merged (issue 51).

:func:`~gpuviz.analysis.run_compare.compare_runs` reads, of each run beside its advice
(:mod:`gpuviz.analysis.advisor.by_rank` makes that rank by rank), four figures of the whole
trace. Each is a sum or a maximum over ranks, so :func:`compare_part` makes a rank's share
where its file is (a cluster's worker) and :func:`merge_compare_parts` puts them together as
:func:`~gpuviz.analysis.run_compare.run_inputs` makes them of the folder read whole, to the
last digit (``tests/analysis/test_compare_parts.py`` compares the two):

- the peak allocated memory: the largest of any GPU's series, each series one rank's
  (:func:`~gpuviz.analysis.rank_parts.merge_parts` merges them: a maximum);
- the hardware figures (MFU per step, the peaks, the FLOP warnings): the summary's merge
  (:func:`~gpuviz.analysis.rank_parts.merge_parts`, the same ``hardware(trace, steps=...)``
  over the same steps as the advisor's), plus whether any rank recorded op calls with shapes
  (the reason an MFU is unknown names it);
- the totals by name (:func:`~gpuviz.analysis.diff.name_totals`): a kernel's and an op's
  count and time are sums of integers over calls, each call one rank's; an op's device self
  time and a module's device self time come from each rank's attribution (a kernel is tied
  to its launch by the rank's own correlation ids) and add up by key;
- the per-step counts (:func:`~gpuviz.analysis.run_changes.step_counts`): a step is found
  within its rank, and every count is of events of the step's own rank, so the counts, the
  steps and their summed lengths (integer ns) add up; the GPU names are a sorted union.

Declined (a string saying why; the caller reads the run whole) where that is not proven:
ranks whose devices have different peaks (each part counts against its own file's, the
folder against its first file's), ranks of which only some have Python stacks (the folder's
module totals cover every rank where any has them) or ``nn.Module`` frames (the folder splits
device time by whether it has module frames at all), a key that is an op on one rank and not
on another, graph replays outside any op (rows keyed by a rank's own graph ids), and parts
left out on import. Qt-free and torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gpuviz.analysis.diff import Totals, name_totals
from gpuviz.analysis.hardware import Hardware
from gpuviz.analysis.rank_parts import RankPart, merge_parts, rank_part
from gpuviz.analysis.run_changes import StepCounts, step_counts
from gpuviz.trace.model import Trace


@dataclass
class ComparePart:
    """One rank file's share of ``gpuviz check``'s inputs, for :func:`merge_compare_parts`.

    Attributes
    ----------
    part : RankPart
        Its summary part (memory peaks, hardware steps and peaks, FLOP warnings).
    totals : dict of str to dict of str to (int, int)
        ``kernel`` and ``op``: :func:`~gpuviz.analysis.diff.name_totals`.
    op_rows : dict of str to (str, int, int)
        Every op-table row's key -> (kind, calls, device self ns).
    module_rows : dict of str to (int, int)
        Every module-table row's key -> (calls, device self ns) ({} without Python stacks).
    stacks, module_frames : bool
        Whether it has Python frames, and ``nn.Module`` frames among them.
    counts : StepCounts
        :func:`~gpuviz.analysis.run_changes.step_counts` over its own steps.
    steps_ns : int
        Its steps' summed length.
    unmergeable : str
        Why its figures cannot be summed with the others' ("" where they can).
    """

    part: RankPart
    totals: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    op_rows: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    module_rows: dict[str, tuple[int, int]] = field(default_factory=dict)
    stacks: bool = False
    module_frames: bool = False
    counts: StepCounts = field(default_factory=lambda: StepCounts(0, 0.0))
    steps_ns: int = 0
    unmergeable: str = ""


@dataclass
class MergedInputs:
    """A folder's inputs of :class:`~gpuviz.analysis.run_compare.RunInputs` beside its advice.

    Attributes
    ----------
    peak_bytes : int or None
    totals : Totals
    hardware : Hardware
    calls_recorded : bool
    counts : StepCounts
    """

    peak_bytes: int | None
    totals: Totals
    hardware: Hardware
    calls_recorded: bool
    counts: StepCounts


def compare_part(trace: Trace) -> ComparePart:
    """The :class:`ComparePart` of ``trace``, one rank file imported alone."""
    from gpuviz.analysis.activity import gpu_activity
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.modules import module_paths, module_table
    from gpuviz.analysis.op_table import op_table
    from gpuviz.analysis.steps import find_steps

    got = ComparePart(rank_part(trace))
    if trace.dropped:
        got.unmergeable = f"parts left out on import ({', '.join(sorted(trace.dropped))})"
        return got
    steps = find_steps(trace, gpu_activity(trace))
    got.totals = {what: name_totals(trace, what) for what in ("kernel", "op")}
    att = attribute(trace)
    rows = op_table(att, flops_fn=None).rows
    if any(r.kind == "graph" for r in rows):
        got.unmergeable = "graph replays outside any op (keyed by the rank's graph ids)"
        return got
    got.op_rows = {r.key: (r.kind, r.calls, r.device_self_ns) for r in rows}
    got.stacks = att.has_stacks()
    if got.stacks:
        got.module_frames = bool(module_paths(att)[0].any())
        got.module_rows = {r.key: (r.calls, r.device_self_ns) for r in module_table(att).rows}
    got.counts = step_counts(trace, steps)
    got.steps_ns = int(np.asarray(steps.duration_ns, dtype=np.int64).sum())
    return got


def merge_compare_parts(parts: Sequence[ComparePart]) -> MergedInputs | str:
    """The folder's inputs from its files' parts (in file order), or why they cannot be
    merged exactly (see the module docstring).

    Raises
    ------
    NotOneJobError
        The files are not one job (:func:`gpuviz.trace.one_job.check_one_job`).
    """
    if not parts:
        raise ValueError("merge_compare_parts needs at least one part")
    why = next((p.unmergeable for p in parts if p.unmergeable), "")
    if why:
        return why
    if len({p.stacks for p in parts}) > 1:
        return "only some ranks have Python stacks: the folder's modules cover every rank"
    if len({p.module_frames for p in parts}) > 1:
        return "only some ranks have nn.Module frames: the folder splits device time by it"
    merged = merge_parts([p.part for p in parts])
    if merged is None:
        return "the ranks' devices have different peaks: the folder counts against the first's"
    summary, hw = merged
    peaks = [m.peak_allocated_bytes for m in summary.memory]
    totals: Totals = {
        what: _sum([p.totals.get(what, {}) for p in parts]) for what in ("kernel", "op")
    }
    kinds: dict[str, str] = {}
    for p in parts:
        for key, (kind, _, _) in p.op_rows.items():
            if kinds.setdefault(key, kind) != kind:
                return f"{key!r} is an {kinds[key]} on one rank and an {kind} on another"
    ops = _sum(
        [{k: (c, d) for k, (kind, c, d) in p.op_rows.items() if kind == "op"} for p in parts]
    )
    totals["op_device"] = {k: v for k, v in ops.items() if v[0] or v[1]}
    modules = _sum([p.module_rows for p in parts]) if parts[0].stacks else {}
    totals["module"] = {k: v for k, v in modules.items() if v[0] or v[1]}
    return MergedInputs(
        max(peaks) if peaks else None,
        totals,
        hw,
        any(p.part.calls_recorded for p in parts),
        _counts(parts),
    )


def _sum(dicts: Sequence[dict[str, tuple[int, int]]]) -> dict[str, tuple[int, int]]:
    """Name -> (count, total) summed over ``dicts``."""
    out: dict[str, tuple[int, int]] = {}
    for d in dicts:
        for name, (c, t) in d.items():
            c0, t0 = out.get(name, (0, 0))
            out[name] = (c0 + c, t0 + t)
    return out


def _counts(parts: Sequence[ComparePart]) -> StepCounts:
    """The folder's :class:`~gpuviz.analysis.run_changes.StepCounts`: the ranks' summed."""
    n = sum(p.counts.steps for p in parts)
    ns = sum(p.steps_ns for p in parts)

    def added(what: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in parts:
            for name, c in getattr(p.counts, what).items():
                out[name] = out.get(name, 0) + c
        return out

    return StepCounts(
        steps=n,
        step_ns=float(ns) / n if n else 0.0,
        kernels=_sum([p.counts.kernels for p in parts]),
        syncs=added("syncs"),
        copies=_sum([p.counts.copies for p in parts]),
        ops=added("ops"),
        reads=added("reads"),
        devices=tuple(sorted({d for p in parts for d in p.counts.devices})),
    )


__all__ = ["ComparePart", "MergedInputs", "compare_part", "merge_compare_parts"]
