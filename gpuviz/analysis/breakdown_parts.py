"""A rank folder's breakdown table made one rank at a time: each rank's rows, then summed.

``gpuviz breakdown DIR --cluster`` need not assemble the whole trace on the client: the op,
op-shape, kernel, module and source-line tables are sums over calls, and every call is one rank's. So each rank
file's table is made where the file is (a cluster's worker, :mod:`gpuviz.commands.breakdown_ranks`),
kept as its rows (integer nanoseconds, calls, FLOPs: :class:`BreakdownPart`), and
:func:`merge_breakdown` sums the rows by key and sorts them as
:func:`gpuviz.analysis.breakdown.breakdown` does for the folder read whole, to the last digit
(``tests/analysis/test_breakdown_parts.py`` compares the two on the rank folders of the tests).

Why only :data:`MERGEABLE` tables (docs/cluster.md says the same):

- ``op``, ``kernel``, ``line``: a row's calls, host and device times are sums over its calls
  (rounded from integer nanoseconds: exact in float64 below 2**53 ns), and the folder's rows
  are sorted by those sums and the key. Merged exactly. The forward, backward and other
  device time of a line (and a module) are split by whether the folder has module frames
  at all (``Attribution.phase_weights``): where some ranks have them and some not, the merge
  declines.
- ``module``: its rows are summed as op rows are; their FLOPs and MFU, joined from their calls
  through the attribution (:mod:`gpuviz.analysis.module_flops`), are summed from each rank's
  FLOPs per row and precision (exact ints: whole-number FLOPs summed in parts, at any size)
  and filled by the code that fills the whole trace's: :mod:`gpuviz.analysis.breakdown_modules`.
- ``step``: each row is one rank's step (a step is found within its rank), so the folder's
  rows are the ranks' in rank order, renamed to the folder's rank numbers (``rank N`` before
  the label where two or more ranks have steps). Its FLOPs and MFU count against its own
  file's peaks, the folder's against its first file's with ``deviceProperties``: where the
  files' peaks differ the merge declines. A serving trace's steps (their phases are made over
  all ranks) are read whole.
- ``op-shape``: its rows are summed as the op table's, keyed by op and raw ``Input Dims``
  text; its roofline columns (bytes, intensity, the precision of a shape's calls) come from
  the folder's op shapes (:func:`gpuviz.analysis.hardware.hardware`), which are sums over
  calls too: each rank sends its shapes' sums and the merge fills the columns by the whole
  trace's rule (:mod:`gpuviz.analysis.breakdown_shapes`, which says where it declines).

Graph replays matched with a capture in the rank's file are read whole: their rows'
``graph_device_us`` is an extra column, which the merge keeps where the ranks agree rather
than sums.

A rank whose rows cannot be summed exactly says why (:attr:`BreakdownPart.unmergeable`, or
:func:`merge_breakdown` finds the ranks disagree on a row's kind, extras or whether its FLOPs
are known, or an op or op-shape row's FLOPs are a float sum of counts that are not whole
numbers, :attr:`~gpuviz.analysis.breakdown_table.BreakdownRow.flops_exact`); the caller then
reads the folder whole, so the answer is never an approximation. Whole-number FLOPs are exact
int sums at any size (:mod:`gpuviz.analysis.exact_sums`), past 2**53 too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gpuviz.analysis.breakdown_hardware import folder_peaks, keep_hardware
from gpuviz.analysis.breakdown_shapes import ShapesPart, merge_shapes, shapes_part
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.hardware import Hardware, OpShape
from gpuviz.analysis.op_calls import sum_call_warnings
from gpuviz.analysis.peaks import PeakMatch, PeakOverride
from gpuviz.analysis.step_flops import StepFigures
from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.kineto import assign_ranks, declared_rank
from gpuviz.trace.model import Trace
from gpuviz.trace.one_job import FileFacts, check_one_job, file_facts

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_modules import ModuleFlopsPart

MERGEABLE = ("op", "op-shape", "kernel", "line", "step", "module")
"""The ``--by`` tables a folder's rows are summed for (see the module docstring)."""

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class BreakdownPart:
    """One rank file's breakdown rows, for :func:`merge_breakdown`.

    Attributes
    ----------
    source : str
        The file.
    declared : int or None
        The rank its file declares (``distributedInfo.rank``).
    job : FileFacts or None
        What its file says of its job (the folder's one-job check).
    warnings : ImportWarnings
        Its import warnings.
    by : str
        The table's kind.
    rows : list of BreakdownRow
        Its rows (int nanoseconds), in its own order.
    unattributed_device_ns : int
        Its device time in no row.
    no_stacks : bool
        ``module``/``line`` of a rank without Python stacks (no rows).
    unmergeable : str or None
        Why its rows cannot be summed with the others' exactly; None where they can.
    device_properties : bool
        Its file has ``deviceProperties``.
    peaks : PeakMatch or None
        ``step``, ``module``: the peaks its FLOPs count against (its own file's).
    step_figures : list of StepFigures
        ``step``, ``module``: its steps' FLOPs and MFU (the report's peaks line names their
        precisions).
    counted : list of OpShape
        ``step``, ``module``: one op shape whose FLOPs were counted, if any, its kernels left
        out (with no peaks, stderr says so only where something would have been measured).
    flop_warnings : list of str
        ``step``, ``module``: calls skipped or flagged as the FLOPs were counted.
    module_frames : bool
        ``module``, ``line``: its trace has ``nn.Module`` frames.
    modules : ModuleFlopsPart or None
        ``module``: its rows' FLOPs (:mod:`gpuviz.analysis.breakdown_modules`).
    shapes : ShapesPart or None
        ``op-shape``: what its rows need to merge (:mod:`gpuviz.analysis.breakdown_shapes`).
    """

    source: str
    declared: int | None
    job: FileFacts | None
    warnings: ImportWarnings
    by: str
    rows: list[BreakdownRow] = field(default_factory=list)
    unattributed_device_ns: int = 0
    no_stacks: bool = False
    unmergeable: str | None = None
    device_properties: bool = False
    peaks: PeakMatch | None = None
    step_figures: list[StepFigures] = field(default_factory=list)
    counted: list[OpShape] = field(default_factory=list)
    flop_warnings: list[str] = field(default_factory=list)
    module_frames: bool = False
    modules: ModuleFlopsPart | None = None
    shapes: ShapesPart | None = None


def breakdown_part(
    trace: Trace, by: str, mine: bool = False, override: PeakOverride | None = None
) -> BreakdownPart:
    """The breakdown rows of ``trace``, one rank file imported alone.

    Parameters
    ----------
    trace : Trace
        One file's trace (:func:`gpuviz.trace.kineto.import_trace`), compile info attached
        if any.
    by : str
        One of :data:`MERGEABLE`.
    mine : bool
        For ``line``: the user's own files only.
    override : PeakOverride, optional
        For ``step`` and ``module``: the caller's peaks (``--peak-tflops``,
        ``--peak-bandwidth``).

    Returns
    -------
    BreakdownPart
    """
    from gpuviz.analysis.breakdown import NoStacksError, breakdown
    from gpuviz.analysis.open_ranges import open_ranges

    if by not in MERGEABLE:
        raise ValueError(f"by={by!r}: a folder's {by} table is not merged from its ranks")
    if len(trace.ranks) != 1:
        raise ValueError(f"breakdown_part takes one file's trace, not {len(trace.ranks)}")
    info = trace.ranks[0]
    warnings = trace.warnings if trace.warnings is not None else ImportWarnings()
    s = trace.slices
    first = end = None
    if len(s):
        first = trace.zero_ns + int(s.start_ns.min())
        end = trace.zero_ns + trace.slices_end_ns
    part = BreakdownPart(
        source=info.source,
        declared=declared_rank(info.metadata),
        job=file_facts(info.source, info.metadata, first, end),
        warnings=ImportWarnings(limit=warnings.limit),
        by=by,
        device_properties=bool(info.metadata.get("deviceProperties")),
    )
    part.warnings.extend(warnings)  # a copy: open_ranges below adds its own line to the trace's
    # Ranges left open are clipped to their step, and the folder's warning about them is
    # worded over all ranks: such a folder is read whole.
    if open_ranges(trace).message is not None:
        part.unmergeable = "ranges left open at the trace's end"
        return part
    if trace.dropped:
        part.unmergeable = f"parts left out on import ({', '.join(sorted(trace.dropped))})"
        return part
    try:
        table = breakdown(trace, by, mine=mine)
    except NoStacksError:
        part.no_stacks = True
        return part
    part.rows = table.rows
    part.unattributed_device_ns = int(table.unattributed_device_ns)
    if by in ("module", "line"):
        from gpuviz.analysis.attribution import attribute
        from gpuviz.analysis.modules import module_paths

        part.module_frames = bool(module_paths(attribute(trace))[0].any())
    if by == "step":
        _step_figures(part, table, trace, override)
    elif by == "module":
        from gpuviz.analysis.breakdown_modules import module_part

        module_part(part, table, trace, override)
    elif by == "op-shape":
        got = shapes_part(trace, table, override)
        if isinstance(got, str):
            part.unmergeable = got
        else:
            part.shapes = got
    if any(r.kind == "graph" for r in table.rows):
        # A graph replay's row is keyed by the rank's own graph ids and kernel counts.
        part.unmergeable = "graph replays outside any op"
    elif not part.unmergeable and any("graph_device_us" in r.extra for r in table.rows):
        # An extra column is kept where the ranks agree, not summed: two ranks replaying the
        # same graph would show one rank's replayed time; and its µs are rounded from the
        # folder's sum of kernel times, not a sum of the ranks' rounded ones.
        part.unmergeable = "graph replays matched with their capture (graph_device_us)"
    return part


def _step_figures(
    part: BreakdownPart, table: Breakdown, trace: Trace, override: PeakOverride | None
) -> None:
    """A step table's FLOPs and MFU, as ``gpuviz breakdown`` adds them, and what its report
    needs of them."""
    from gpuviz.analysis.hardware import annotate_breakdown, hardware

    if any("phase" in r.extra for r in table.rows):
        part.unmergeable = "serving steps (their phases are made over all ranks)"
        return
    hw = hardware(trace, override)
    annotate_breakdown(table, hw)
    keep_hardware(part, hw)


@dataclass
class MergedBreakdown:
    """A folder's breakdown from its ranks' parts, as the folder read whole gives it.

    Attributes
    ----------
    table : Breakdown
        Its rows (no kernel rows: :meth:`Breakdown.kernels_of` is empty).
    sources : list of str
        Its files, in rank order.
    warnings : ImportWarnings
        Its import warnings.
    no_stacks : bool
        No rank has Python stacks (``module``, ``line``).
    hardware : Hardware or None
        ``step``: the peaks, the steps' figures and the FLOP warnings (no shapes but one).
    """

    table: Breakdown
    sources: list[str]
    warnings: ImportWarnings
    no_stacks: bool = False
    hardware: Hardware | None = None


def merge_breakdown(parts: Sequence[BreakdownPart]) -> MergedBreakdown | str:
    """The breakdown of a folder from its files' parts (in file order).

    Returns
    -------
    MergedBreakdown or str
        The table (rows summed by key and sorted as :func:`~gpuviz.analysis.breakdown.breakdown`
        sorts the folder's), its sources in rank order and its import warnings; or why the
        parts cannot be merged exactly (the caller reads the folder whole).

    Raises
    ------
    NotOneJobError
        The files are not one job (:func:`gpuviz.trace.one_job.check_one_job`).
    """
    if not parts:
        raise ValueError("merge_breakdown needs at least one part")
    jobs = [p.job for p in parts if p.job is not None]
    if len(jobs) == len(parts):  # the importer's check, on the same facts
        check_one_job(Path(parts[0].source).parent, jobs)
    ranks, note = assign_ranks([p.declared for p in parts], [p.source for p in parts], True)
    order = sorted(range(len(parts)), key=lambda i: (ranks[i] is None, ranks[i] or 0, i))
    parts = [parts[i] for i in order]
    why = next((p.unmergeable for p in parts if p.unmergeable), None)
    if why is not None:
        return why
    warnings = ImportWarnings(limit=parts[0].warnings.limit)
    if note:  # first, as the importer puts it
        warnings.add(note, 0)
    for p in parts:
        warnings.extend(p.warnings)
    sources = [p.source for p in parts]
    by = parts[0].by
    if all(p.no_stacks for p in parts):
        return MergedBreakdown(Breakdown(by, [], _EMPTY, _EMPTY), sources, warnings, True)
    if any(p.no_stacks for p in parts):
        return "some ranks have Python stacks and some not"
    if by == "step":
        return _merge_steps(parts, [ranks[i] for i in order], sources, warnings)
    if by in ("op", "op-shape") and any(not r.flops_exact for p in parts for r in p.rows):
        return _NOT_WHOLE
    if by == "op-shape":
        shaped = merge_shapes(
            [p.rows for p in parts],
            [p.shapes for p in parts],
            [p.device_properties for p in parts],
            [ranks[i] for i in order],
            _add,
        )
        if isinstance(shaped, str):
            return shaped
        shaped[0].unattributed_device_ns = sum(p.unattributed_device_ns for p in parts)
        return MergedBreakdown(shaped[0], sources, warnings, hardware=shaped[1])
    if by in ("module", "line") and len({p.module_frames for p in parts}) > 1:
        # The folder's phase split counts forward time outside every module as "other"
        # only where some rank has module frames (Attribution.phase_weights).
        return "some ranks have nn.Module frames and some not"
    rows: dict[str, BreakdownRow] = {}
    for p in parts:
        for r in p.rows:
            got = rows.get(r.key)
            if got is None:
                rows[r.key] = dataclasses.replace(r, extra=dict(r.extra))
                continue
            why = _add(got, r)
            if why is not None:
                return f"{r.key!r}: {why}"
    table = Breakdown(
        by=by,
        rows=list(rows.values()),
        kernel_rows=_EMPTY,
        kernel_row=_EMPTY,
        unattributed_device_ns=sum(p.unattributed_device_ns for p in parts),
    ).sorted(by_self=by == "line")
    merged = MergedBreakdown(table, sources, warnings)
    if by == "module":
        from gpuviz.analysis.breakdown_modules import merge_module_flops

        hw = merge_module_flops(table, parts)
        if isinstance(hw, str):
            return hw
        merged.hardware = hw
    return merged


def _merge_steps(
    parts: list[BreakdownPart], ranks: list[int | None], sources: list[str], w: ImportWarnings
) -> MergedBreakdown | str:
    """The step table of a folder: each rank's steps in rank order, renamed to its rank."""
    peaks = folder_peaks(parts)
    if isinstance(peaks, str):
        return peaks
    flop_warnings = sum_call_warnings([p.flop_warnings for p in parts])
    if flop_warnings is None:
        return "FLOP warnings of several kinds (their order is the whole trace's)"
    stepped = {r for p, r in zip(parts, ranks) if p.rows}
    rows: list[BreakdownRow] = []
    figures: list[StepFigures] = []
    for p, rank in zip(parts, ranks):
        for r in p.rows:
            label = r.key if len(stepped) < 2 else f"rank {rank} {r.key}"
            rows.append(dataclasses.replace(r, key=label, extra={**r.extra, "rank": rank}))
        figures += [dataclasses.replace(f, rank=rank) for f in p.step_figures]
    hw = Hardware(
        peaks,
        [s for p in parts for s in p.counted][:1],
        figures,
        warnings=flop_warnings,
    )
    unattributed = sum(p.unattributed_device_ns for p in parts)
    table = Breakdown("step", rows, _EMPTY, _EMPTY, unattributed_device_ns=unattributed)
    return MergedBreakdown(table, sources, w, hardware=hw)


_NOT_WHOLE = "FLOP counts that are not whole numbers (their float64 sums depend on order)"
"""Why an op or op-shape table is not merged: a row's FLOPs are a float64 sum made int of
counts that are not whole numbers (Kineto's ``flops`` of 1.5 or 1e308), whose rounding
depends on the order of its terms; whole-number counts are exact int sums at any size."""

_SUMMED = ("calls", "cpu_self_ns", "cpu_total_ns", "device_self_ns", "device_total_ns")
_SUMMED_OR_NONE = ("forward_device_ns", "backward_device_ns", "other_device_ns", "flops")


def _add(into: BreakdownRow, row: BreakdownRow) -> str | None:
    """Add ``row``'s sums to ``into`` (the same key, another rank); why not, where the two
    disagree on what is not a sum."""
    if row.kind != into.kind:
        return f"a {into.kind} on one rank, a {row.kind} on another"
    if row.extra != into.extra:
        return "its extra columns differ by rank"
    for name in _SUMMED:
        setattr(into, name, getattr(into, name) + getattr(row, name))
    for name in _SUMMED_OR_NONE:
        a, b = getattr(into, name), getattr(row, name)
        if (a is None) != (b is None):
            # Known on one rank only: the folder's figure (Kineto's on some calls, a formula
            # on others) is not the sum of the ranks'.
            return f"its {name} is known on some ranks only"
        if a is not None:
            setattr(into, name, a + b)
    return None


__all__ = ["MERGEABLE", "BreakdownPart", "MergedBreakdown", "breakdown_part", "merge_breakdown"]
