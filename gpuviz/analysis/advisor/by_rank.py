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
   Also the sums of its op shapes (:func:`~gpuviz.analysis.breakdown_shapes.rank_shapes`).
2. Per rule, its worst rank over the job's merged savings runs it again, now told that rank and
   the ranks affected (:class:`_Merged`); the finding's code locations come from that rank's
   file; its evidence moves to the folder's clock (``ReducedRanks.offset_ns``). ``straggler``
   runs on the straggler's file. The findings are then ordered as ``advise`` orders them.

Of other ranks' figures, each rank's rules are given the job's step totals, the rank analysis
(``exposed_comm``'s waits for the last rank, ``straggler``), the best pinned copy bandwidth
over all ranks (``pageable_copy``) and, in phase 2, the job's op shapes (``low_mfu`` and
``memory_bound_hot`` print an op shape's TFLOP/s, TB/s and roof share summed over all ranks'
calls of it: :func:`~gpuviz.analysis.breakdown_shapes.job_shapes` adds the ranks' exact sums
and fills the figures by the whole trace's rule). Phase 1 needs none of them: the two rules
pick their calls and measure their savings per call and per rank, save ``memory_bound_hot``'s
"the shape has no FLOPs", which is checked to be the job's on every rank.

It declines where the folder read whole is small (within the replay's limits, where the rules
replay steps over all ranks at once: read it whole, it is cheap), where a rank's rule
needs figures of other ranks that are not carried here (``idle_devices``/``dp_imbalance``
over several ranks' steps), where the ranks' op calls are not counted as the folder counts
them or their shapes' sums are not exact (:func:`~gpuviz.analysis.breakdown_shapes.
job_shapes` says why: shapes on some ranks only, the ranks' convolution hints differ, a
shape's FLOPs known on some ranks only; where a roof rule fires, graph replays, compiled code
and counts that are not whole numbers),
where the ranks' devices have different peaks, for serving folders,
where a rank's import left events out under its memory limit or a rank has ranges left
open at its end (the folder read whole budgets and words these over all ranks; other import
warnings are rebuilt as the folder's import orders and caps them:
:func:`~.rank_inputs.folder_warnings`), for folders whose ranks differ in having ops or Python stacks (the code locations are made per
job), and where a rule fails on a rank. Qt-free and torch-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from gpuviz.analysis.advisor import Advice, sorted_findings
from gpuviz.analysis.advisor import replay as replay_limits
from gpuviz.analysis.advisor.context import AdviceContext, worst_per_rank
from gpuviz.analysis.advisor.findings import Finding
from gpuviz.analysis.advisor.host_sync import symptom_order, symptom_sums
from gpuviz.analysis.advisor.job import JobFigures, RankHook
from gpuviz.analysis.advisor.rank_inputs import (
    RankFile,
    as_rank,
    best_pinned,
    folder_of,
    folder_warnings,
    on_rank_clock,
    per_rank_steps,
    rank_codes,
    rank_file,
)
from gpuviz.analysis.breakdown_shapes import RankShapes, job_shapes, rank_shapes
from gpuviz.analysis.rank_reduction import ReducedRanks, combine_reductions
from gpuviz.analysis.ranks import RankAnalysis
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

ROOF_RULES = ("low_mfu", "memory_bound_hot")
"""Hooked rules whose finding prints the job's op shapes: phase 2 is given them."""


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
    shapes: list[RankShapes] = field(default_factory=list)


@dataclass(frozen=True)
class JobInputs:
    """What each rank's rules are given of the job (small and picklable: a cluster's workers
    get it with each rank's task).

    Attributes
    ----------
    per_rank_steps : dict of int to (int, int)
        Every rank's steps: their total length (ns) and count.
    analysis : RankAnalysis or None
        The job's rank analysis on the folder's clock; None for a job of one rank.
    offset_ns : dict of int to int
        Each rank's zero less the folder's.
    pinned_gbps : dict of str to float
        The best pinned copy bandwidth per direction over all ranks.
    shapes : list of OpShape, optional
        The job's op shapes (phase 2, where a roof rule runs: :func:`worst_ranks` sets it).
    """

    per_rank_steps: dict[int, tuple[int, int]]
    analysis: RankAnalysis | None
    offset_ns: dict[int, int]
    pinned_gbps: dict[str, float]
    shapes: list[Any] | None = None

    def figures(self, code: int, hook: RankHook) -> JobFigures:
        """Rank ``code``'s :class:`~.job.JobFigures`, its collectives on its own clock."""
        ra = None if self.analysis is None else on_rank_clock(self.analysis, self.offset_ns[code])
        return JobFigures(
            self.per_rank_steps,
            ra,
            replay=False,
            hook=hook,
            pinned_gbps=self.pinned_gbps,
            shapes=self.shapes,
        )


@dataclass
class JobPlan:
    """Pass 0 of a rank folder, made from its ranks' :class:`~.rank_inputs.RankFile` (on the
    client where a cluster's workers made those): :func:`plan_job`.

    Attributes
    ----------
    sources : list of str
        The files, in the order given.
    codes : list of int
        Each file's folder rank, in that order.
    declined : str
        Why the folder must be read whole ("" where it is advised rank by rank).
    inputs : JobInputs or None
        What each rank's rules are given; None where declined before the reductions combined.
    reduced : ReducedRanks or None
        The ranks' reductions combined (the advice's ``steps``, the straggler).
    warning_samples : list of str
        The folder's import warnings, as its import read whole keeps them.
    """

    sources: list[str]
    codes: list[int]
    declined: str = ""
    inputs: JobInputs | None = None
    reduced: ReducedRanks | None = None
    warning_samples: list[str] = field(default_factory=list)

    def order(self) -> list[int]:
        """The files' indices in the folder's rank order."""
        return sorted(range(len(self.codes)), key=lambda i: self.codes[i])

    def offsets(self) -> dict[int, int]:
        """Each rank's zero less the folder's ({} before the reductions combined)."""
        return {} if self.reduced is None else self.reduced.offset_ns


@dataclass
class RankPass1:
    """Phase 1 on one rank (:func:`rank_phase1`): what its rules recorded, or why not."""

    declined: str = ""
    seen: dict[str, tuple[dict[int, float], dict[int, float]]] = field(default_factory=dict)
    sums: tuple[float, float, int, int] | None = None
    flags: tuple[bool, bool] | None = None
    peaks: list[object] = field(default_factory=list)
    shapes: RankShapes | None = None


def plan_job(
    files: Sequence[RankFile], max_ranks: int | None = None, max_slices: int | None = None
) -> JobPlan:
    """Pass 0: the folder ranks of ``files`` (one per file, in file order), the gate (see
    :func:`advise_by_rank` for the limits) and the job's figures."""
    codes, note = rank_codes(files)
    plan = JobPlan([f.source for f in files], codes)
    plan.declined = _gate(list(files), note, max_ranks, max_slices)
    plan.warning_samples = list(folder_warnings(files, codes, note).samples)
    if plan.declined:
        return plan
    reds = [f.reduction.with_rank(c) if f.reduction.rank != c else f.reduction
            for f, c in zip(files, codes, strict=True)]  # fmt: skip
    rr = combine_reductions(reds)
    several = len(set(codes)) >= 2
    steps = per_rank_steps(rr.analysis.breakdown)
    pinned = best_pinned([f.pinned_gbps for f in files])
    plan.reduced = rr
    plan.inputs = JobInputs(steps, rr.analysis if several else None, rr.offset_ns, pinned)
    return plan


def rank_phase1(trace: Trace, code: int, inputs: JobInputs) -> RankPass1:
    """Phase 1 on rank ``code``'s trace (already :func:`~.rank_inputs.as_rank`)."""
    p1 = _Phase1()
    why = _phase1(trace, inputs.figures(code, _Recorder()), p1)
    if why:
        return RankPass1(why)
    shapes = p1.shapes[0] if p1.shapes else None
    return RankPass1("", p1.seen, p1.sums[0], next(iter(p1.flags)), p1.peaks, shapes)


def worst_ranks(
    plan: JobPlan, passes: Sequence[RankPass1]
) -> tuple[dict[str, tuple[dict[int, float], dict[int, float]]], dict[int, list[str]]] | str:
    """Phase 1's per-rank results (one per file, as ``plan``'s) merged over the job: each
    hooked rule's savings over all ranks, and the rules (and ``straggler``) to run on each
    worst rank; or why the folder must be read whole. Where a roof rule runs, ``plan.inputs``
    is given the job's op shapes."""
    p1 = _Phase1()
    for i in plan.order():  # the folder's rank order, as read whole
        got = passes[i]
        if got.declined:
            return got.declined
        for kind, (per, totals) in got.seen.items():
            mine = p1.seen.setdefault(kind, ({}, {}))
            mine[0].update(per)
            mine[1].update(totals)
        assert got.flags is not None and got.sums is not None
        p1.flags.add(got.flags)
        p1.peaks += got.peaks
        p1.sums.append(got.sums)
        if got.shapes is not None:
            p1.shapes.append(got.shapes)
    why = _declines(p1)
    if why:
        return why
    merged = {k: p1.seen[k] for k in HOOKED if k in p1.seen}
    roof = any(k in merged for k in ROOF_RULES)
    if p1.shapes:
        if len(p1.shapes) != len(passes):
            return "a rank's op shapes were not counted"
        shapes = job_shapes(p1.shapes, p1.peaks[0], exact=roof)
        if isinstance(shapes, str):
            return f"the ranks' op shapes are not the folder's: {shapes}"
        if roof:
            assert plan.inputs is not None
            plan.inputs = dataclasses.replace(plan.inputs, shapes=shapes)
    worst: dict[int, list[str]] = {}
    for kind, (per, totals) in merged.items():
        worst.setdefault(worst_per_rank(per, totals)[0], []).append(kind)
    rr = plan.reduced
    assert rr is not None
    if len(set(plan.codes)) >= 2 and rr.analysis.straggler is not None:
        worst.setdefault(int(rr.analysis.straggler.rank), []).append("straggler")
    return merged, dict(sorted(worst.items()))


def rank_phase2(
    trace: Trace,
    code: int,
    inputs: JobInputs,
    merged: dict[str, tuple[dict[int, float], dict[int, float]]],
    kinds: list[str],
) -> list[Finding] | str:
    """Phase 2 on worst rank ``code``'s trace: the findings of ``kinds``, on the folder's
    clock; or why not."""
    return _phase2(
        trace, inputs.figures(code, _Merged(merged)), kinds, inputs.offset_ns[code], code
    )


def job_advice(plan: JobPlan, passes: Sequence[RankPass1], findings: list[Finding]) -> Advice:
    """The folder's advice from phase 2's ``findings`` (each worst rank's, in rank order):
    sorted, ``host_sync`` and ``launch_bound`` ordered by phase 1's sums over all ranks."""
    rr = plan.reduced
    assert rr is not None
    order = plan.order()
    got = [passes[i].sums for i in order]
    sums = tuple(sum(s[k] for s in got if s is not None) for k in range(4))
    out = symptom_order((sums[0], sums[1], int(sums[2]), int(sums[3])), sorted_findings(findings))
    sources = [plan.sources[i] for i in order]
    return Advice(sources, rr.analysis.breakdown, out, {}, None, list(plan.warning_samples))


def advise_by_rank(
    traces: Sequence[Trace],
    *,
    max_ranks: int | None = None,
    max_slices: int | None = None,
) -> RankAdvice:
    """``advise`` of a rank folder from its files' traces, each imported alone.

    The same passes a cluster's workers run a rank each (:mod:`gpuviz.commands.advise_ranks`):
    :func:`~.rank_inputs.rank_file` and :func:`plan_job` (pass 0), :func:`rank_phase1` and
    :func:`worst_ranks`, :func:`rank_phase2` and :func:`job_advice`.

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
    plan = plan_job([rank_file(traces[i]) for i in range(len(traces))], max_ranks, max_slices)
    if plan.declined:
        return RankAdvice(None, plan.declined, plan.offsets())
    assert plan.inputs is not None
    codes = plan.codes

    def rank(code: int) -> Trace:
        return as_rank(traces[codes.index(code)], code)

    passes = [RankPass1("(not run)") for _ in codes]
    for i in plan.order():
        passes[i] = rank_phase1(rank(codes[i]), codes[i], plan.inputs)
        if passes[i].declined:  # the rest need not run
            return RankAdvice(None, passes[i].declined, plan.offsets())
    chosen = worst_ranks(plan, passes)
    if isinstance(chosen, str):
        return RankAdvice(None, chosen, plan.offsets())
    merged, worst = chosen
    findings: list[Finding] = []
    for code, kinds in worst.items():
        got = rank_phase2(rank(code), code, plan.inputs, merged, kinds)
        if isinstance(got, str):
            return RankAdvice(None, got, plan.offsets())
        findings += got
    return RankAdvice(job_advice(plan, passes, findings), None, plan.offsets())


def _gate(files: list[RankFile], note: str, max_ranks: int | None, max_slices: int | None) -> str:
    """Why the folder is not advised rank by rank before any rule runs, or ""."""
    from gpuviz.trace.one_job import NotOneJobError, check_one_job

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
    # The other import warnings are the files' own, rebuilt as the folder's (plan_job).
    dropped = next((f for f in files if f.dropped), None)
    if dropped is not None:  # the folder read whole drops by its own budget, over all ranks
        return (
            f"{dropped.source} was imported with parts left out ({', '.join(dropped.dropped)}): "
            "the folder read whole leaves out what its own memory limit needs"
        )
    clipped = next((f for f in files if f.clipped), None)
    if clipped is not None:  # read whole, one warning counts and names them over all ranks
        return (
            f"{clipped.source} has ranges left open at its end: the folder read whole "
            "words their warning over all ranks"
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
        p1.shapes.append(rank_shapes(t, ctx.hardware))
    p1.sums.append(symptom_sums(ctx))
    return ""


def _declines(p1: _Phase1) -> str:
    """Why phase 1's figures cannot make the folder's findings, or ""."""
    if len(p1.flags) > 1:
        return (
            "the ranks differ in having ops or Python stacks: the code locations of the "
            "findings are made for the whole job"
        )
    if any(p != p1.peaks[0] for p in p1.peaks[1:]):
        return "the ranks' devices have different peaks: the folder takes the first rank's"
    return ""


def _phase2(
    t: Trace, job: JobFigures, kinds: list[str], offset_ns: int, code: int
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
    return [_shifted(f, offset_ns) for f in out]


def _shifted(f: Finding, offset_ns: int) -> Finding:
    """``f`` with its evidence moved by ``offset_ns`` (a rank's clock to the folder's)."""
    ev = tuple(
        dataclasses.replace(e, start_ns=e.start_ns + offset_ns, end_ns=e.end_ns + offset_ns)
        for e in f.evidence
    )
    return dataclasses.replace(f, evidence=ev)


__all__ = [
    "HOOKED",
    "ROOF_RULES",
    "JobInputs",
    "JobPlan",
    "RankAdvice",
    "RankPass1",
    "advise_by_rank",
    "job_advice",
    "plan_job",
    "rank_phase1",
    "rank_phase2",
    "worst_ranks",
]
