"""What every rule reads, computed once per trace: steps, coverages, idle gaps, ranks.

Rules are functions of an :class:`AdviceContext`. It builds the shared figures lazily, so a
rule that needs the aligned collectives pays for them only when the trace has several ranks.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import GpuActivity, gpu_activity, rank_value
from gpuviz.analysis.advisor.findings import (
    MAX_EVIDENCE,
    REPORT_SHARE,
    Evidence,
    Finding,
    severity_for,
)
from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.gaps import IdleGaps, idle_gaps
from gpuviz.analysis.names import name_mask
from gpuviz.analysis.serving_markers import SOURCES as SERVING_SOURCES
from gpuviz.analysis.steps import (
    StepBreakdown,
    Steps,
    comm_mask,
    device_coverages,
    find_steps,
    pytorch_op_coverages,
    step_breakdown,
)
from gpuviz.trace.device_props import device_entry
from gpuviz.trace.model import NONE, Trace, TrackKind

if TYPE_CHECKING:
    from gpuviz.analysis.advisor.job import JobFigures

I64 = npt.NDArray[np.int64]


class AdviceContext:
    """The trace and the figures the rules share.

    Parameters
    ----------
    trace : Trace
    job : JobFigures, optional
        The figures of the whole job where ``trace`` is one rank of a folder advised rank by
        rank (:mod:`gpuviz.analysis.advisor.by_rank`): every rank's step totals, the rank
        analysis, whether the replay runs, and the hook that picks each rule's worst rank.
    """

    def __init__(self, trace: Trace, job: JobFigures | None = None) -> None:
        self.trace = trace
        self._masks: dict[Any, npt.NDArray[np.bool_]] = {}
        self.job = job
        if job is not None:
            # Set before first use, in place of the cached figures of this file alone: the
            # rules then measure each rank against the job's ranks, as in the folder read whole.
            self.__dict__["_per_rank_steps"] = dict(job.per_rank_steps)
            self.__dict__["ranks"] = job.ranks

    @property
    def replay(self) -> bool:
        """Whether rules may replay the steps' graphs (:mod:`~gpuviz.analysis.advisor.replay`):
        not for a rank of a job too large to replay whole."""
        return self.job is None or self.job.replay

    def worst_rank(
        self, kind: str, per_rank: dict[int, float], totals: dict[int, float]
    ) -> tuple[int, float]:
        """Rule ``kind``'s worst rank and its share (:func:`worst_per_rank`), or the job's
        hook's answer where the trace is one rank of a job advised rank by rank."""
        if self.job is not None and self.job.hook is not None:
            return self.job.hook.worst(kind, per_rank, totals)
        return worst_per_rank(per_rank, totals)

    def affected(self, kind: str, ranks: list[int]) -> list[int]:
        """The ranks rule ``kind`` found the problem on: ``ranks`` (this trace's), or the
        job's where the trace is one rank of a job advised rank by rank."""
        if self.job is not None and self.job.hook is not None:
            return self.job.hook.affected(kind, ranks)
        return ranks

    # -- shared figures, built on first use --------------------------------------------------
    @cached_property
    def activity(self) -> GpuActivity:
        """Every kernel, copy and set."""
        return gpu_activity(self.trace)

    @cached_property
    def comm(self) -> npt.NDArray[np.bool_]:
        """Which :attr:`activity` rows are NCCL kernels."""
        return comm_mask(self.trace, self.activity)

    @cached_property
    def steps(self) -> Steps:
        """The step windows of every rank."""
        return find_steps(self.trace, self.activity)

    @cached_property
    def coverages(self) -> dict[tuple[int, int], dict[str, Coverage]]:
        """Per (rank, device): merged compute, comm, copy and busy time."""
        return device_coverages(self.activity, self.comm)

    @cached_property
    def op_coverages(self) -> dict[int, Coverage]:
        """Per rank: the time its CPU threads spend inside PyTorch ops."""
        return pytorch_op_coverages(self.trace)

    @cached_property
    def breakdown(self) -> StepBreakdown:
        """The step breakdown."""
        return step_breakdown(
            self.trace, self.steps, self.activity, self.coverages, self.op_coverages
        )

    @cached_property
    def gaps(self) -> IdleGaps:
        """Every GPU idle gap inside the steps, with its cause."""
        return idle_gaps(self.trace, self.steps, self.activity, self.coverages, self.op_coverages)

    @cached_property
    def ranks(self) -> Any:
        """The rank analysis (:class:`~gpuviz.analysis.ranks.RankAnalysis`), or None for one rank."""
        if len({r for r in self.trace.rank_values()}) < 2:
            return None
        from gpuviz.analysis.ranks import rank_analysis

        return rank_analysis(self.trace, self.breakdown)

    @cached_property
    def hardware(self) -> Any:
        """Roofline figures and MFU per step (:class:`~gpuviz.analysis.hardware.Hardware`)."""
        from gpuviz.analysis.hardware import hardware

        hw = hardware(self.trace, steps=self.steps)
        if self.job is not None and self.job.shapes is not None:
            # a rank of a job: its shapes' figures are the job's (summed over all ranks)
            from gpuviz.analysis.breakdown_shapes import with_job_shapes

            hw = with_job_shapes(hw, self.job.shapes)
        return hw

    @cached_property
    def serving(self) -> Any:
        """A serving trace's phases (:class:`~gpuviz.analysis.serving_phases.ServingReport`),
        or None for a training trace."""
        from gpuviz.analysis.serving_phases import serving_report

        if not any(src in SERVING_SOURCES for src in self.steps.source):
            return None
        return serving_report(self.trace, self.steps, self.hardware)

    @cached_property
    def splits(self) -> list[Any]:
        """DataParallel replicas (:func:`~gpuviz.analysis.splits.find_splits`)."""
        from gpuviz.analysis.splits import find_splits

        return find_splits(self.trace)

    def mask(self, test: Any) -> npt.NDArray[np.bool_]:
        """``name_mask(symbols, test)``, cached per test function."""
        m = self._masks.get(test)
        if m is None:
            m = self._masks[test] = name_mask(self.trace.symbols, test)
        return m

    # -- step time, the yardstick of every saving ------------------------------------------------
    @cached_property
    def _per_rank_steps(self) -> dict[int, tuple[int, int]]:
        """Per rank: its steps' total length and their count, in one pass over the steps.

        Rules ask for every rank's figures: a scan of all steps per rank was per-pair work
        over ranks (1,000 ranks: a million step rows read for each rule), issue 51.
        """
        st = self.steps
        ranks, inverse = np.unique(np.asarray(st.rank, dtype=np.int64), return_inverse=True)
        totals = np.zeros(len(ranks), dtype=np.int64)
        np.add.at(totals, inverse, np.asarray(st.duration_ns, dtype=np.int64))
        counts = np.bincount(inverse, minlength=len(ranks))
        return {
            int(r): (int(t), int(c))
            for r, t, c in zip(ranks.tolist(), totals.tolist(), counts.tolist())
        }

    def step_total_ns(self, rank: int) -> int:
        """The length of all of ``rank``'s step windows."""
        return self._per_rank_steps.get(int(rank), (0, 0))[0]

    def step_count(self, rank: int) -> int:
        """How many steps ``rank`` has."""
        return self._per_rank_steps.get(int(rank), (0, 0))[1]

    def mean_step_ns(self, rank: int) -> float:
        """``rank``'s mean step window."""
        n = self.step_count(rank)
        return self.step_total_ns(rank) / n if n else 0.0

    def rank_codes(self) -> list[int]:
        """The ranks that have steps, as their codes (-1 for a lone file)."""
        return sorted(self._per_rank_steps)

    # -- device facts --------------------------------------------------------------------------
    @cached_property
    def _rank_info(self) -> dict[int, Any]:
        """Rank code -> its first :class:`RankInfo` (a lookup, not a scan of every rank's per
        call: rules ask per (rank, device), issue 51)."""
        out: dict[int, Any] = {}
        for info in self.trace.ranks:
            out.setdefault(NONE if info.rank is None else int(info.rank), info)
        return out

    def device_properties(self, rank: int, device: int) -> dict[str, Any]:
        """The ``deviceProperties`` entry of a rank's GPU, or {}."""
        info = self._rank_info.get(int(rank))
        if info is None:
            return {}
        return device_entry(info.metadata, device) or {}

    def thread_of(self, row: int) -> int | None:
        """The CPU thread id of a slice row, or None (GPU rows, string tids)."""
        t = self.trace.tracks
        track = int(self.trace.slices.track[row])
        if int(t.kind[track]) not in (TrackKind.CPU_THREAD, TrackKind.CPU_ANNOTATION):
            return None
        tid = int(t.tid[track])
        return tid if tid >= 0 else None

    def stream_of(self, row: int) -> int | None:
        """The GPU stream of a slice row, or None."""
        t = self.trace.tracks
        stream = int(t.stream[int(self.trace.slices.track[row])])
        return stream if stream >= 0 else None

    def slice_evidence(self, rows: npt.ArrayLike, names: bool = True) -> list[Evidence]:
        """One evidence per slice row (its rank, device, stream or thread, and range)."""
        s, t = self.trace.slices, self.trace.tracks
        out = []
        for row in np.asarray(rows, dtype=np.int64).tolist()[:MAX_EVIDENCE]:
            track = int(s.track[row])
            device = int(t.device[track])
            start = int(s.start_ns[row])
            out.append(
                Evidence(
                    rank=rank_value(int(t.rank[track])),
                    device=device if device >= 0 else None,
                    start_ns=start,
                    end_ns=start + int(s.dur_ns[row]),
                    stream=self.stream_of(row),
                    thread=self.thread_of(row),
                    names=(self.trace.name_of(row),) if names else None,
                    count=1,
                )
            )
        return out

    # -- making findings -------------------------------------------------------------------------
    def finding(
        self,
        kind: str,
        saving_ns: float,
        total_ns: float,
        *,
        title: str,
        detail: str,
        fix: str,
        saving_how: str,
        evidence: list[Evidence],
        severity: str | None = None,
        report_share: float = REPORT_SHARE,
    ) -> Finding | None:
        """A finding whose severity follows its share of ``total_ns``; None below the floor.

        Parameters
        ----------
        kind : str
        saving_ns : float
            What fixing it could save.
        total_ns : float
            The step time that saving is measured against.
        title, detail, fix, saving_how : str
        evidence : list of Evidence
        severity : str, optional
            Overrides the share-based severity (a rule that does so says why in the docs).
        report_share : float
            Below this share (and without ``severity``) the rule stays silent.
        """
        share = float(saving_ns) / float(total_ns) if total_ns > 0 else 0.0
        if severity is None and share < report_share:
            return None
        steps = self.steps_spanned(total_ns)
        return Finding(
            kind=kind,
            severity=severity or severity_for(share),
            title=title,
            detail=detail,
            fix=fix,
            saving_ns=round(float(saving_ns)),
            saving_how=saving_how,
            share=share,
            evidence=tuple(evidence[:MAX_EVIDENCE]),
            step_ns=float(total_ns) / steps if steps and total_ns > 0 else 0.0,
        )

    def steps_spanned(self, total_ns: float) -> int:
        """How many steps a rule's yardstick ``total_ns`` spans: the step count of the rank
        whose steps add up to it, else the mean count per rank (a rule that averages ranks);
        0 without steps."""
        codes = self.rank_codes()
        for r in codes:
            if abs(self.step_total_ns(r) - float(total_ns)) <= 1.0:
                return self.step_count(r)
        counts = [self.step_count(r) for r in codes]
        return max(1, round(sum(counts) / len(counts))) if counts else 0


def worst_per_rank(per_rank: dict[int, float], totals: dict[int, float]) -> tuple[int, float]:
    """The rank whose saving is the largest share of its step time, and that share."""
    best, share = -2, -1.0
    for rank, saving in per_rank.items():
        total = totals.get(rank, 0.0)
        s = saving / total if total > 0 else 0.0
        if s > share:
            best, share = rank, s
    return best, share


def ranks_phrase(ctx: AdviceContext, rank: int, affected: list[int]) -> str:
    """`` of rank 3`` / `` of rank 3 (the worst of 5 of 64 ranks)`` / ``""`` for a lone process."""
    all_ranks = ctx.rank_codes()
    if all_ranks == [NONE] or rank == NONE:
        return ""
    if len(affected) <= 1:
        return f" of rank {rank}"
    return f" of rank {rank} (the worst of {len(affected)} of {len(all_ranks)} ranks)"
