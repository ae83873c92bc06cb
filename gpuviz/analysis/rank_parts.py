"""A rank folder's summary made one rank at a time: each rank's figures, then merged.

``gpuviz summary`` of a folder of rank files need not hold every rank at once: each of its
figures is a rank's own (streams, devices, memory, overlap, steps, their MFU) or adds up over
ranks (the kernel table, the span, the event and warning counts). So each file is imported
alone (in a child process, :mod:`gpuviz.commands.summary_ranks`), :func:`rank_part` keeps its
small figures, the rank's trace is let go, and :func:`merge_parts` puts the figures together
as :func:`gpuviz.analysis.summary.summarize` and :func:`gpuviz.analysis.hardware.hardware`
give them for the whole folder, to the last digit (``tests/analysis/test_rank_parts.py``
compares the two on every multi-rank trace of the tests).

What a rank's figures depend on beyond the rank itself, and how the merge restores it:

- its rank number (the folder's rule: declared ranks where all differ, else file order):
  each part says what its file declares; the merge assigns the numbers and renumbers;
- the trace's span (a device's utilization is its busy time over it): the parts keep their
  earliest start and latest end in absolute time;
- the peaks that the MFU and the precisions are counted against: the whole trace's are those
  of the first file with ``deviceProperties``; a part counts with its own file's, so where
  the files' peaks differ (GPUs of two kinds) the merge declines (None) and the caller reads
  the folder whole.

Memory series keep their peaks only (the summary prints nothing else of them). A serving
trace's steps keep their figures (:class:`~gpuviz.analysis.serving_phases.StepRecord`, times
from the file's own zero, which the merge shifts to the folder's) and :func:`merge_serving`
makes their phases again over all ranks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuviz.analysis.hardware import Hardware, OpCalls, RankFigures, StepFigures, hardware
from gpuviz.analysis.kernels import KernelSums
from gpuviz.analysis.memory import MemorySeries, memory_series
from gpuviz.analysis.op_calls import sum_call_warnings
from gpuviz.analysis.overlap import DeviceOverlap, device_overlap
from gpuviz.analysis.peaks import PeakMatch, PeakOverride
from gpuviz.analysis.splits import SplitRow, find_splits
from gpuviz.analysis.streams import DeviceStats, StreamStats, device_stats, stream_stats
from gpuviz.analysis.summary import TOP_KERNELS, Summary
from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.kineto import assign_ranks, declared_rank
from gpuviz.trace.model import Trace
from gpuviz.trace.one_job import FileFacts, check_one_job, file_facts

if TYPE_CHECKING:
    from gpuviz.analysis.serving_phases import StepRecord


@dataclass
class RankPart:
    """The figures of one rank file, for :func:`merge_parts`.

    Attributes
    ----------
    source : str
        The file.
    declared : int or None
        The rank the file declares (``distributedInfo.rank``).
    device_properties : bool
        Whether the file has ``deviceProperties``.
    event_count : int
        Its events, of every phase.
    warnings : ImportWarnings
        Its import warnings.
    first_ns, end_ns : int or None
        Absolute time of its earliest slice start and latest slice end (None: no slice).
    streams, devices, memory, overlap, splits
        Its figures as :func:`~gpuviz.analysis.summary.summarize` makes them (the devices'
        utilization is made again in the merge; the memory series hold their peaks only).
    kernels : KernelSums
        Its kernels per name.
    peaks : PeakMatch
        The peaks of its file's device (:func:`~gpuviz.analysis.peaks.device_peaks`).
    steps, rank_figures
        Its :class:`~gpuviz.analysis.hardware.Hardware` steps and ranks.
    job : FileFacts or None
        What its file says of its job (:func:`gpuviz.trace.one_job.file_facts`): the merge
        refuses files that are not one job, as the importer does.
    zero_ns : int
        The absolute time of its trace's zero (its earliest event).
    serving : list of StepRecord or None
        Its serving steps' figures (:func:`gpuviz.analysis.serving_phases.serving_report`),
        None where it has no serving step.
    calls_recorded : bool
        Whether its Hardware holds op calls (``gpuviz check``'s unknown-MFU reason).
    """

    source: str
    declared: int | None
    device_properties: bool
    event_count: int
    warnings: ImportWarnings
    first_ns: int | None
    end_ns: int | None
    streams: list[StreamStats]
    devices: list[DeviceStats]
    kernels: KernelSums
    memory: list[MemorySeries]
    overlap: list[DeviceOverlap]
    splits: list[SplitRow]
    peaks: PeakMatch
    steps: list[StepFigures]
    rank_figures: list[RankFigures]
    shapes_dropped: bool = False
    flop_warnings: list[str] = field(default_factory=list)
    job: FileFacts | None = None
    zero_ns: int = 0
    serving: list[StepRecord] | None = None
    calls_recorded: bool = False


_NONE = np.zeros(0, dtype=np.int64)
"""What a part's memory series hold instead of their samples."""


def rank_part(trace: Trace, override: PeakOverride | None = None) -> RankPart:
    """The figures of ``trace``, one rank file imported alone.

    Parameters
    ----------
    trace : Trace
        One file's trace (:func:`gpuviz.trace.kineto.import_trace` of the file).
    override : PeakOverride, optional
        The caller's peaks (``--peak-tflops``, ``--peak-bandwidth``).

    Returns
    -------
    RankPart
    """
    from gpuviz.analysis.activity import gpu_activity
    from gpuviz.analysis.steps import find_steps

    if len(trace.ranks) != 1:
        raise ValueError(f"rank_part takes one file's trace, not {len(trace.ranks)}")
    info = trace.ranks[0]
    activity = gpu_activity(trace)
    s = trace.slices
    first = end = None
    if len(s):
        first = trace.zero_ns + int(s.start_ns.min())
        end = trace.zero_ns + trace.slices_end_ns
    steps = find_steps(trace, activity)
    hw = hardware(trace, override, steps=steps)
    memory = [
        dataclasses.replace(m, ts_ns=_NONE, allocated_bytes=_NONE, reserved_bytes=None)
        for m in memory_series(trace, gpu_only=True)
    ]
    return RankPart(
        source=info.source,
        declared=declared_rank(info.metadata),
        device_properties=bool(info.metadata.get("deviceProperties")),
        event_count=int(trace.event_count),
        warnings=trace.warnings if trace.warnings is not None else ImportWarnings(),
        first_ns=first,
        end_ns=end,
        streams=stream_stats(trace, activity),
        devices=device_stats(trace, activity),
        kernels=KernelSums.of(trace),
        memory=memory,
        overlap=device_overlap(trace, activity),
        splits=find_splits(trace),
        peaks=hw.peaks,
        steps=hw.steps,
        rank_figures=hw.ranks,
        shapes_dropped=hw.shapes_dropped,
        flop_warnings=hw.warnings,
        job=file_facts(info.source, info.metadata, first, end),
        zero_ns=int(trace.zero_ns),
        serving=_serving_records(trace, steps, hw),
        calls_recorded=bool(len(hw.calls.rows)),
    )


def _serving_records(trace: Trace, steps: Any, hw: Hardware) -> list[StepRecord] | None:
    """The serving steps' figures of one rank, as the folder's ``serving`` object has them."""
    from gpuviz.analysis.serving_markers import serving_markers

    if not serving_markers(trace):  # a pass over the symbols: a training rank pays no more
        return None
    from gpuviz.analysis.serving_phases import serving_report

    report = serving_report(trace, steps, hw)
    return None if report is None else report.records


def merge_parts(parts: Sequence[RankPart]) -> tuple[Summary, Hardware] | None:
    """The summary and MFU figures of a folder from its files' parts (in file order).

    Returns
    -------
    (Summary, Hardware) or None
        As :func:`~gpuviz.analysis.summary.summarize` and
        :func:`~gpuviz.analysis.hardware.hardware` give them for the folder read whole (the
        Hardware without its per-shape figures and calls: the summary prints none); None where
        the files' devices have different peaks (the parts were counted against their own).

    Raises
    ------
    NotOneJobError
        The files are not one job (:func:`gpuviz.trace.one_job.check_one_job`).
    """
    if not parts:
        raise ValueError("merge_parts needs at least one part")
    jobs = [p.job for p in parts if p.job is not None]
    if len(jobs) == len(parts):  # the importer's check, on the same facts
        check_one_job(Path(parts[0].source).parent, jobs)
    parts, ranks, note = _ranked(parts)
    peaks = next((p.peaks for p in parts if p.device_properties), parts[0].peaks)
    if any(p.peaks != peaks for p in parts):
        return None
    warnings = ImportWarnings()
    if note:  # first, as the importer puts it
        warnings.add(note, 0)
    for p in parts:
        warnings.extend(p.warnings)
    firsts = [p.first_ns for p in parts if p.first_ns is not None]
    ends = [p.end_ns for p in parts if p.end_ns is not None]
    span = max(ends) - min(firsts) if firsts else 0

    def each(what: str) -> list[Any]:
        """Every part's figures ``what``, renumbered to its rank, in rank order (stable: a
        rank's figures keep their own order, which is the whole trace's within a rank)."""
        out: list[tuple[int, Any]] = []
        for p, r in zip(parts, ranks):
            out += [(_order(r), dataclasses.replace(x, rank=r)) for x in getattr(p, what)]
        out.sort(key=lambda pair: pair[0])
        return [x for _, x in out]

    devices = [
        dataclasses.replace(d, utilization=d.busy_ns / span if span else 0.0)
        for d in each("devices")
    ]
    kernels = KernelSums.merge([p.kernels for p in parts])
    summary = Summary(
        sources=[p.source for p in parts],
        events=sum(p.event_count for p in parts),
        warnings=warnings.count,
        span_ns=span,
        ranks=list(ranks),
        streams=each("streams"),
        devices=devices,
        top_kernels=kernels.rows(TOP_KERNELS),
        memory=each("memory"),
        overlap=each("overlap"),
        splits=each("splits"),
        warning_samples=list(warnings.samples),
    )
    hw = Hardware(
        peaks,
        [],
        each("steps"),
        OpCalls.empty(),
        each("rank_figures"),
        shapes_dropped=any(p.shapes_dropped for p in parts),  # said, not "record shapes"
        warnings=_flop_warnings(parts),
    )
    return summary, hw


def _flop_warnings(parts: Sequence[RankPart]) -> list[str]:
    """The folder's FLOP warnings: one line per reason, the ranks' counts summed, as the
    folder read whole gives them (each rank's lines, where they cannot be summed)."""
    summed = sum_call_warnings([p.flop_warnings for p in parts])
    return summed if summed is not None else [w for p in parts for w in p.flop_warnings]


def _ranked(parts: Sequence[RankPart]) -> tuple[list[RankPart], list[int | None], str | None]:
    """The parts in the importer's order (by rank, ties in file order), their ranks, and the
    rank note (made in file order)."""
    ranks, note = assign_ranks([p.declared for p in parts], [p.source for p in parts], True)
    order = sorted(range(len(parts)), key=lambda i: (ranks[i] is None, ranks[i] or 0, i))
    return [parts[i] for i in order], [ranks[i] for i in order], note


def merge_serving(parts: Sequence[RankPart], hw: Hardware) -> dict[str, Any] | None:
    """The ``serving`` object of ``gpuviz summary --json`` (docs/serving.md) of a folder
    from its files' parts, as the folder read whole gives it; None where no rank has serving
    steps.

    Parameters
    ----------
    parts : sequence of RankPart
        In file order, as :func:`merge_parts` takes them.
    hw : Hardware
        :func:`merge_parts`'s (its peak bandwidth counts the phases' MBU).
    """
    from gpuviz.analysis.serving_phases import merge_records, phases_of, serving_json

    if not any(p.serving for p in parts):
        return None
    parts, ranks, _ = _ranked(parts)
    zero = min(p.zero_ns for p in parts)
    records = merge_records(
        [(p.serving or [], r, p.zero_ns - zero) for p, r in zip(parts, ranks, strict=True)]
    )
    bandwidth = getattr(getattr(hw.peaks, "peaks", None), "bandwidth_tb_s", None)
    phases, ttft, tpot, notes = phases_of(records, bandwidth)
    return serving_json(records, phases, ttft, tpot, notes)


def _order(rank: int | None) -> int:
    return -1 if rank is None else rank
