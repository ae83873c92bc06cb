"""AdviceContext with a job's figures (issue 51): what a rank's rules read of the job."""

from __future__ import annotations

from gpuviz.analysis.advisor.context import AdviceContext, worst_per_rank
from gpuviz.analysis.advisor.job import JobFigures
from gpuviz.analysis.advisor.replay import replay_saving
from gpuviz.trace.kineto import load_trace
from tests.analysis.advisor.rank_jobs import DATA

FP32 = DATA / "advisor" / "adv_fp32_matmul.json.gz"


def test_replay_off_for_a_rank_of_a_large_job() -> None:
    t = load_trace(str(FP32))

    def gpu(g):  # type: ignore[no-untyped-def]
        return g.thread < 0

    alone = replay_saving(AdviceContext(t), gpu, 2.0)
    assert alone is not None and alone > 0  # the file alone is small: it replays
    job = JobFigures(AdviceContext(t)._per_rank_steps, None, replay=False)
    assert replay_saving(AdviceContext(t, job), gpu, 2.0) is None


def test_job_steps_decide_rank_codes_and_step_time() -> None:
    t = load_trace(str(FP32))
    own = AdviceContext(t)
    assert own.rank_codes() == [-1] and own.step_count(-1) == 3  # 3 ProfilerSteps (README)
    job = JobFigures({-1: (30, 3), 4: (50, 2)}, None)
    ctx = AdviceContext(t, job)
    assert ctx.rank_codes() == [-1, 4]
    assert ctx.step_total_ns(4) == 50 and ctx.mean_step_ns(4) == 25
    assert ctx.ranks is None


def test_worst_rank_without_a_hook_is_worst_per_rank() -> None:
    ctx = AdviceContext(load_trace(str(FP32)))
    per, totals = {0: 1.0, 1: 3.0, 2: 4.0}, {0: 10.0, 1: 10.0, 2: 8.0}  # shares .1 .3 .5
    assert ctx.worst_rank("x", per, totals) == worst_per_rank(per, totals) == (2, 0.5)
    tie = {0: 5.0, 1: 3.0, 2: 4.0}  # 0.5 twice: the first rank keeps it
    assert ctx.worst_rank("x", tie, totals) == (0, 0.5)
    assert ctx.affected("x", [1, 2]) == [1, 2]
