"""The figures of a whole job that a rank's :class:`~gpuviz.analysis.advisor.AdviceContext`
takes where a rank folder is advised rank by rank (:mod:`gpuviz.analysis.advisor.by_rank`).

A rule measures each rank against the job: a rank's saving against its step time, the worst
rank among all, the time it waited for the last rank at each collective. A rank's file
imported alone knows none of that, so the context of such a file is given the job's figures
(:class:`JobFigures`), and a :class:`RankHook` that stands in for the rules' choice of their
worst rank: it records each rule's per-rank figures (phase 1), then answers with the job's
worst rank and the ranks affected (phase 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class RankHook(Protocol):
    """What a rule asks of the job when it picks its worst rank."""

    def worst(
        self, kind: str, per_rank: dict[int, float], totals: dict[int, float]
    ) -> tuple[int, float]:
        """Rule ``kind``'s worst rank and its share of its step time, given this rank's
        ``per_rank`` savings and ``totals`` step times."""
        ...

    def affected(self, kind: str, ranks: list[int]) -> list[int]:
        """The ranks rule ``kind`` found the problem on, given this rank's ``ranks``."""
        ...


@dataclass
class JobFigures:
    """What a rank's context takes from its job.

    Attributes
    ----------
    per_rank_steps : dict of int to (int, int)
        Every rank's steps: their total length (ns) and their count.
    ranks : RankAnalysis or None
        The job's rank analysis (:func:`~gpuviz.analysis.rank_reduction.combine_reductions`),
        its collectives' times on this rank's clock; None for a job of one rank.
    replay : bool
        Whether rules may replay steps (off where the job read whole is past the replay's
        limits, :mod:`~gpuviz.analysis.advisor.replay`).
    hook : RankHook or None
        Picks each rule's worst rank; None: the rank's own figures decide.
    pinned_gbps : dict of str to float, optional
        The best pinned copy bandwidth per direction over all ranks (``pageable_copy``
        holds each pageable copy against it); None: the rank's own.
    shapes : list of OpShape, optional
        The job's op shapes, summed over all ranks (``low_mfu`` and ``memory_bound_hot``
        print their figures): :func:`~gpuviz.analysis.breakdown_shapes.job_shapes`; None:
        the rank's own.
    """

    per_rank_steps: dict[int, tuple[int, int]]
    ranks: Any
    replay: bool = True
    hook: RankHook | None = None
    pinned_gbps: dict[str, float] | None = None
    shapes: list[Any] | None = None


__all__ = ["JobFigures", "RankHook"]
