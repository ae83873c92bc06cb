"""``advise`` of a rank folder from its ranks' files, each imported alone (issue 51).

A folder read whole holds every rank's events at once (8.8 GB at 1,024 ranks of 10k kernels).
:func:`advise_by_rank` never does: it gives exactly what :func:`~gpuviz.analysis.advisor.advise`
of the folder read whole gives, or declines (:attr:`RankAdvice.declined` says why) where that
is not proven. In three passes over the ranks' traces:

0. Job figures. Each file gets its folder rank (:func:`~.rank_inputs.ranked_traces`); the
   ranks' reductions combine into the job's steps (the advice's ``steps``, on the folder's
   clock), each rank's step totals and the rank analysis (aligned collectives, straggler):
   :func:`~gpuviz.analysis.rank_reduction.combine_reductions`.
1. Per rank, every rule that picks a worst rank runs on the rank's context holding the job's
   figures (:class:`~.job.JobFigures`) and records its per-rank savings instead of choosing
   (:class:`_Recorder`). Also per rank: the four sums that order ``host_sync`` before
   ``launch_bound`` (:func:`~.host_sync.symptom_sums`) and what decides a decline.
2. Per rule, its worst rank over the job's merged savings runs it again, now told that rank and
   the ranks affected (:class:`_Merged`); the finding's code locations come from that rank's
   file; its evidence moves to the folder's clock (``ReducedRanks.offset_ns``). ``straggler``
   runs on the straggler's file. The findings are then ordered as ``advise`` orders them.

Of other ranks' figures, each rank's rules are given the job's step totals, the rank analysis
(``exposed_comm``'s waits for the last rank, ``straggler``) and the best pinned copy bandwidth
over all ranks (``pageable_copy``).

It declines where the folder read whole is small (within the replay's limits, where the rules
replay steps over all ranks at once: read it whole, it is cheap), where a rank's rule
needs figures of other ranks that are not carried here (``low_mfu``/``memory_bound_hot``'s
shapes summed over ranks and the first rank's peaks, ``idle_devices``/``dp_imbalance`` over
several ranks' steps), for serving folders,
where a rank's file has import warnings (the folder read whole orders and caps them over
all ranks), for folders whose ranks differ in having ops or Python stacks (the code locations are made per
job), and where a rule fails on a rank. Qt-free and torch-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module

from gpuviz.analysis.advisor import Advice, sorted_findings
from gpuviz.analysis.advisor import replay as replay_limits
from gpuviz.analysis.advisor.context import AdviceContext, worst_per_rank
from gpuviz.analysis.advisor.findings import Finding
from gpuviz.analysis.advisor.host_sync import symptom_order, symptom_sums
from gpuviz.analysis.advisor.job import JobFigures
from gpuviz.analysis.advisor.rank_inputs import (
    RankFile,
    as_rank,
    best_pinned,
    folder_of,
    on_rank_clock,
    per_rank_steps,
    rank_codes,
    rank_file,
)
from gpuviz.analysis.rank_reduction import ReducedRanks, combine_reductions
from gpuviz.analysis.serving_markers import SOURCES as SERVING_SOURCES
from gpuviz.trace.model import Kind, Trace

HOOKED = (
    "launch_bound",
    "host_sync",
    "pageable_copy",
    "gpu_starved",
    "fp32_matmul",
    "copy_not_overlapped",
    "exposed_comm",
    "low_occupancy",
    "low_mfu",
    "memory_bound_hot",
    "eager_decode",
    "scheduler_gaps",
    "mixed_step_slow",
)
"""The rules that pick their worst rank through ``AdviceContext.worst_rank``: phase 1 records
their per-rank savings, phase 2 runs them on the worst rank's file."""

CROSS_RANK = {
    "low_mfu": "its ops' figures are summed over all ranks' calls of a shape",
    "memory_bound_hot": "its ops' figures are summed over all ranks' calls of a shape",
}
"""Hooked rules whose finding needs figures of other ranks than the worst: where one could
fire (a rank records savings for it), the job is declined."""


@dataclass
class RankAdvice:
    """What :func:`advise_by_rank` made of a rank folder.

    Attributes
    ----------
    advice : Advice or None
        As ``advise`` of the folder read whole gives it (``context`` is None: no trace holds
        the job); None where declined.
    declined : str or None
        Why the folder must be read whole instead; None where ``advice`` is given.
    offset_ns : dict of int to int
        Each rank's zero less the folder's (its evidence moved by it).
    """

    advice: Advice | None
    declined: str | None = None
    offset_ns: dict[int, int] = field(default_factory=dict)


class _Recorded(Exception):
    """Phase 1's stop: the rule's per-rank savings are recorded, its finding is not needed."""


class _Recorder:
    """Phase 1's hook: keeps each rule's per-rank savings and step totals of one rank."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[dict[int, float], dict[int, float]]] = {}

    def worst(
        self, kind: str, per_rank: dict[int, float], totals: dict[int, float]
    ) -> tuple[int, float]:
        self.seen[kind] = (dict(per_rank), dict(totals))
        raise _Recorded(kind)

    def affected(self, kind: str, ranks: list[int]) -> list[int]:
        return ranks


class _Merged:
    """Phase 2's hook: the job's worst rank and affected ranks of each rule."""

    def __init__(self, merged: dict[str, tuple[dict[int, float], dict[int, float]]]) -> None:
        self.merged = merged

    def worst(
        self, kind: str, per_rank: dict[int, float], totals: dict[int, float]
    ) -> tuple[int, float]:
        rank, share = worst_per_rank(*self.merged[kind])
        if rank not in per_rank:
            # the worst rank's own run must see what its phase 1 saw
            raise RuntimeError(f"{kind}: rank {rank} has no saving of its own in phase 2")
        return rank, share

    def affected(self, kind: str, ranks: list[int]) -> list[int]:
        return sorted(self.merged[kind][0])


@dataclass
class _Phase1:
    """Phase 1's figures of the job, gathered over its ranks."""

    seen: dict[str, tuple[dict[int, float], dict[int, float]]] = field(default_factory=dict)
    sums: list[tuple[float, float, int, int]] = field(default_factory=list)
    flags: set[tuple[bool, bool]] = field(default_factory=set)
    peaks: list[object] = field(default_factory=list)


def advise_by_rank(
    traces: Sequence[Trace],
    *,
    max_ranks: int | None = None,
    max_slices: int | None = None,
) -> RankAdvice:
    """``advise`` of a rank folder from its files' traces, each imported alone.

    Parameters
    ----------
    traces : sequence of Trace
        One trace per file of the folder, in the folder's file order (``trace_files``). Each
        is asked for by index in up to three passes and not kept: a sequence that imports
        the file on each access (from the trace cache) holds one rank at a time.
    max_ranks, max_slices : int, optional
        The replay's limits (default: :data:`~gpuviz.analysis.advisor.replay.MAX_RANKS`,
        :data:`~gpuviz.analysis.advisor.replay.MAX_SLICES`). A folder within both is declined:
        read whole, its rules replay steps over all ranks at once.

    Returns
    -------
    RankAdvice
        The advice, or why it was declined.

    Raises
    ------
    ValueError
        Where there is no trace, or one holds more than one file.
    """
    if len(traces) == 0:
        raise ValueError("no rank traces to advise")
    files = [rank_file(traces[i]) for i in range(len(traces))]
    codes, note = rank_codes(files)
    why = _gate(files, note, max_ranks, max_slices)
    if why:
        return RankAdvice(None, why)
    reds = [f.reduction.with_rank(c) if f.reduction.rank != c else f.reduction
            for f, c in zip(files, codes, strict=True)]  # fmt: skip
    rr = combine_reductions(reds)
    steps = per_rank_steps(rr.analysis.breakdown)
    several = len(set(codes)) >= 2
    pinned = best_pinned([f.pinned_gbps for f in files])
    order = sorted(range(len(files)), key=lambda i: codes[i])  # the folder's rank order

    def rank(code: int) -> Trace:
        return as_rank(traces[codes.index(code)], code)

    def job(code: int, hook: _Recorder | _Merged) -> JobFigures:
        ra = on_rank_clock(rr.analysis, rr.offset_ns[code]) if several else None
        return JobFigures(steps, ra, replay=False, hook=hook, pinned_gbps=pinned)

    p1 = _Phase1()
    for i in order:
        why = _phase1(rank(codes[i]), job(codes[i], _Recorder()), p1)
        if why:
            return RankAdvice(None, why, rr.offset_ns)
    why = _declines(p1)
    if why:
        return RankAdvice(None, why, rr.offset_ns)
    merged = {k: p1.seen[k] for k in HOOKED if k in p1.seen}
    worst: dict[int, list[str]] = {}
    for kind, (per, totals) in merged.items():
        worst.setdefault(worst_per_rank(per, totals)[0], []).append(kind)
    if several and rr.analysis.straggler is not None:
        worst.setdefault(int(rr.analysis.straggler.rank), []).append("straggler")
    findings: list[Finding] = []
    for code, kinds in sorted(worst.items()):
        got = _phase2(rank(code), job(code, _Merged(merged)), kinds, rr, code)
        if isinstance(got, str):
            return RankAdvice(None, got, rr.offset_ns)
        findings += got
    findings = sorted_findings(findings)
    sums = tuple(sum(s[i] for s in p1.sums) for i in range(4))
    findings = symptom_order((sums[0], sums[1], int(sums[2]), int(sums[3])), findings)
    sources = [files[i].source for i in order]
    advice = Advice(sources, rr.analysis.breakdown, findings, {}, None, [])
    return RankAdvice(advice, None, rr.offset_ns)


def _gate(files: list[RankFile], note: str, max_ranks: int | None, max_slices: int | None) -> str:
    """Why the folder is not advised rank by rank before any rule runs, or ""."""
    from gpuviz.trace.one_job import NotOneJobError, check_one_job

    if note:
        return f"the folder's ranks are numbered by file order ({note})"
    gate_ranks = replay_limits.MAX_RANKS if max_ranks is None else max_ranks
    gate_slices = replay_limits.MAX_SLICES if max_slices is None else max_slices
    n_slices = sum(f.slices for f in files)
    if len(files) <= gate_ranks and n_slices <= gate_slices:
        return (
            f"{len(files)} ranks and {n_slices} slices are within the replay's limits "
            f"({gate_ranks} ranks, {gate_slices} slices): read the folder whole"
        )
    try:
        check_one_job(folder_of([f.source for f in files]), [f.facts for f in files])
    except NotOneJobError as exc:
        return f"the files are not one job: {exc}"
    warned = next((f for f in files if f.warned), None)
    if warned is not None:
        # read whole, the import orders and caps the ranks' warnings (and adds its own
        # over all ranks): a rank's own list alone does not make the folder's
        return (
            f"{warned.source} has import warnings: the folder read whole orders and counts "
            "them for all ranks"
        )
    return ""


def _phase1(t: Trace, job: JobFigures, p1: _Phase1) -> str:
    """Run the hooked rules on one rank, gathering what they record into ``p1``; a reason to
    decline, or ""."""
    code = t.ranks[0].rank
    ctx = AdviceContext(t, job)
    if any(src in SERVING_SOURCES for src in ctx.steps.source):
        return f"rank {code} is a serving trace: its phases are measured over all ranks"
    hook = job.hook
    assert isinstance(hook, _Recorder)
    for kind in HOOKED:
        try:
            import_module(f"gpuviz.analysis.advisor.{kind}").check(ctx)
        except _Recorded:
            pass
        except Exception as exc:  # the folder read whole may fail the same way, or not
            return f"rule {kind} failed on rank {code}: {type(exc).__name__}: {exc}"
    for kind, (per, totals) in hook.seen.items():
        mine = p1.seen.setdefault(kind, ({}, {}))
        mine[0].update(per)
        mine[1].update(totals)
    from gpuviz.analysis.advisor.idle_devices import _multi_gpu_steps

    if len(ctx.splits) or _multi_gpu_steps(ctx):
        return (
            f"rank {code} has steps on several GPUs: idle_devices and dp_imbalance weigh "
            "all ranks' steps at once"
        )
    cat = t.slices.kind
    p1.flags.add((bool((cat == Kind.CPU_OP).any()), bool((cat == Kind.PYTHON_FUNCTION).any())))
    if "hardware" in ctx.__dict__:
        p1.peaks.append(ctx.hardware.peaks.peaks)
    p1.sums.append(symptom_sums(ctx))
    return ""


def _declines(p1: _Phase1) -> str:
    """Why phase 1's figures cannot make the folder's findings, or ""."""
    for kind, why in CROSS_RANK.items():
        if kind in p1.seen:
            return f"{kind} could apply and {why}"
    if len(p1.flags) > 1:
        return (
            "the ranks differ in having ops or Python stacks: the code locations of the "
            "findings are made for the whole job"
        )
    if any(p != p1.peaks[0] for p in p1.peaks[1:]):
        return "the ranks' devices have different peaks: the folder takes the first rank's"
    return ""


def _phase2(
    t: Trace, job: JobFigures, kinds: list[str], rr: ReducedRanks, code: int
) -> list[Finding] | str:
    """The findings of ``kinds`` on their worst rank ``t``, on the folder's clock; or why
    not."""
    from gpuviz.analysis.advisor.where import with_code

    ctx = AdviceContext(t, job)
    out: list[Finding] = []
    for kind in kinds:
        try:
            out += import_module(f"gpuviz.analysis.advisor.{kind}").check(ctx)
        except Exception as exc:  # the folder read whole may fail the same way, or not
            return f"rule {kind} failed on rank {code}: {type(exc).__name__}: {exc}"
    try:
        out = with_code(t, out)
    except Exception as exc:
        return f"the code locations failed on rank {code}: {type(exc).__name__}: {exc}"
    off = rr.offset_ns[code]
    return [_shifted(f, off) for f in out]


def _shifted(f: Finding, offset_ns: int) -> Finding:
    """``f`` with its evidence moved by ``offset_ns`` (a rank's clock to the folder's)."""
    ev = tuple(
        dataclasses.replace(e, start_ns=e.start_ns + offset_ns, end_ns=e.end_ns + offset_ns)
        for e in f.evidence
    )
    return dataclasses.replace(f, evidence=ev)


__all__ = ["CROSS_RANK", "HOOKED", "RankAdvice", "advise_by_rank"]
