"""``straggler``: a rank the others wait for at their collectives.

Condition (:func:`gpuviz.analysis.ranks.find_straggler`): in a multi-rank trace, the rank that
arrives last at most collectives (at least half of those it takes part in) has a median compute
per step at least 1.1x the median rank's, and the others waited for it. A rank as fast in
compute but slower in *work* (step time less waiting: it is held up on the host) counts when it
is last at three quarters of the collectives, and at least three times.

Saving: for a straggler slower in compute, predicted by replay
(:mod:`gpuviz.analysis.advisor.replay`): the steps with its compute kernels as fast as the
median rank's, where that explains at least half of the time the others lost to it (a rank
whose host loop launches tiny kernels and synchronizes is slower in compute, yet faster
kernels would not bring it in earlier). Otherwise (held up on the host: which of its host time is the excess, the trace
does not say; scaling all of it would spread a 10 ms sleep over work nobody waits for), and
where the replay does not run: how much later it arrived than the next-to-last rank, summed
over the collectives it was last at: the time every rank lost to it alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.advisor.context import AdviceContext
from gpuviz.analysis.advisor.findings import MAX_EVIDENCE, Evidence, Finding, fmt_ms, fmt_pct
from gpuviz.analysis.advisor.replay import PREDICTED, replay_saving
from gpuviz.analysis.dep_graph import COMPUTE, GPU, StepGraph

KIND = "straggler"

HOST_HELD = 0.5
"""A compute straggler whose replayed saving is under this share of the time the others lost
to it is held up elsewhere: its saving is that lost time, not the replay's."""


def check(ctx: AdviceContext) -> list[Finding]:
    """The ``straggler`` finding of a trace (empty when the condition does not hold)."""
    ra = ctx.ranks
    if ra is None or ra.straggler is None:
        return []
    st, table = ra.straggler, ra.collectives
    col = table.column(st.rank)
    ranks = [int(r) for r in table.ranks.tolist()]
    total = float(np.mean([ctx.step_total_ns(r) for r in ranks if ctx.step_count(r)]))
    waiting = table.present[st.collectives].sum() - len(st.collectives)
    measure = "compute" if st.measure == "compute" else "work (step time less waiting)"
    detail = (
        f"Rank {st.rank} arrived last at {st.last} of the {st.taking_part} collectives it took "
        f"part in. Its median {measure} per step is {st.ratio:.2f}x the median rank's "
        f"({fmt_ms(st.rank_ns)} against {fmt_ms(st.median_ns)}). The other ranks waited "
        f"{fmt_ms(st.others_wait_ns)} for it in all ({int(waiting)} waits); the job lost "
        f"{fmt_ms(st.delay_ns)} to it, {fmt_pct(st.delay_ns / total)} of {fmt_ms(total)} of "
        "steps per rank."
    )
    evidence = []
    for c in st.collectives[:MAX_EVIDENCE].tolist():
        has = table.present[c]
        row = int(table.slice_row[c, col])
        device = ctx.trace.tracks.device[ctx.trace.slices.track[row]]
        evidence.append(
            Evidence(
                rank=st.rank,
                device=int(device) if device >= 0 else None,
                start_ns=int(table.arrival_ns[c][has].min()),
                end_ns=int(table.last_arrival_ns[c]),
                stream=ctx.stream_of(row),
                thread=ctx.thread_of(row),
                names=(f"{table.name[c]} ({table.group[c]})",),
                count=int(has.sum()),
            )
        )
    fix = (
        f"Find out why rank {st.rank} does more or starts later: uneven data (shard sizes, "
        "sequence lengths: bucket or pad batches to equal work), a slower or throttled GPU "
        "(`nvidia-smi -q -d CLOCK,PERFORMANCE` on its host), or host work only it does "
        "(logging, checkpointing, evaluation on one rank: move it off the step's critical path)."
    )
    saving, how = (
        float(st.delay_ns),
        (
            "How much later the straggler arrived than the next-to-last rank, summed over the "
            "collectives it came last to: the time every rank lost to it alone."
        ),
    )
    replayed = None
    if st.measure == "compute":
        replayed = replay_saving(ctx, _compute_of(st.rank), st.ratio)
    if replayed is not None and replayed >= HOST_HELD * st.delay_ns:
        saving = replayed
        how = PREDICTED + (
            f"the steps with rank {st.rank}'s {measure} {st.ratio:.2f}x faster, as fast as the "
            "median rank's."
        )
    elif replayed is not None:
        # Its kernels explain little of its lateness (a host loop that launches and syncs, a
        # time-bound wait): the others still lost what it kept them waiting.
        gain = f"only {fmt_ms(replayed)} in all" if replayed >= 1000 else "nothing"
        how += (
            f" Its compute kernels as fast as the median rank's would save {gain} (replayed): "
            "most of what holds it up is not GPU compute."
        )
    f = ctx.finding(
        KIND,
        saving,
        total,
        title=f"Rank {st.rank} is a straggler: the other ranks wait for it",
        detail=detail,
        fix=fix,
        saving_how=how,
        evidence=evidence,
    )
    return [f] if f is not None else []


def _compute_of(rank: int) -> Callable[[StepGraph], npt.NDArray[np.bool_]]:
    """The nodes that make a compute straggler slow: its compute kernels."""

    def select(g: StepGraph) -> npt.NDArray[np.bool_]:
        return (g.rank == rank) & (g.kind == GPU) & (g.category == COMPUTE)

    return select
