"""``check NEW --against BASE --cluster`` rank by rank (issue 51), against a LocalCluster of two
worker processes: the JSON and text are the local path's byte for byte (both runs read whole
and compared here, a separate route), made without the client assembling either run (the
whole-trace route on the cluster is counted); a run whose by-rank steps decline is read whole
and the output is still the local path's; a regression is still exit 1.

The folders of tests/data are within the advise replay's limits, where the by-rank advice
declines (read whole, the rules replay steps over all ranks at once): the tests lower the limit
in this process (``no_replay``: the gate is decided on the client) or copy a folder's ranks past
it (18 ranks, :func:`~tests.analysis.advisor.rank_jobs.copies_job`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")

import test_cli_cluster as base

from gpuviz.analysis.advisor import replay as replay_mod
from gpuviz.commands import check_ranks
from gpuviz.trace.files import trace_files
from tests.analysis.advisor.rank_jobs import copies_job

scheduler = base.scheduler
_env = base._env
_run = base._run
whole_trace = base.whole_trace

DATA = Path(__file__).parent / "data"
PAIRS = [
    ("whatif/gpu/gloo_even", "whatif/gpu/gloo_slow"),
    ("whatif/cpu_gloo/even", "whatif/cpu_gloo/slow"),
]
PASSES = 3
"""``ranks done`` lines of a run compared rank by rank: advise's pass 0 (which makes the
comparison's parts too: no pass of their own), phase 1 and phase 2."""


@pytest.fixture
def no_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's limits below every folder's size: the by-rank advice's gate open."""
    monkeypatch.setattr(replay_mod, "MAX_SLICES", -1)


@pytest.fixture
def client_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the client reads whole (``read_trace``)."""
    from gpuviz.commands import reading

    read: list[str] = []
    real = reading.read_trace

    def counted(path: str, *args: object, **kw: object) -> object:
        read.append(path)
        return real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "read_trace", counted)
    return read


def _both(
    capsys: pytest.CaptureFixture[str], scheduler: str, new: Path, base_: Path, *command: str
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    args = ["check", str(new), "--against", str(base_), *command, "--no-cache"]
    here = _run(capsys, *args)
    there = _run(capsys, *args, "--cluster", scheduler)
    assert here[0] == there[0], (here[2], there[2])
    assert here[0] in (0, 1), here[2]
    return here, there


def _passes(err: str) -> int:
    return sum("ranks done" in line for line in err.splitlines())


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize(("baseline", "new"), PAIRS)
def test_json_and_text_are_the_local_paths_without_the_whole_trace(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    baseline: str,
    new: str,
    whole_trace: list[int],
    client_reads: list[str],
) -> None:
    a, b = DATA / baseline, DATA / new
    for command in (["--json"], []):
        here, there = _both(capsys, scheduler, b, a, *command)
        assert client_reads == [str(a), str(b)]  # the local run's reads alone
        client_reads.clear()
        assert there[1] == here[1], command  # byte for byte
        assert _passes(there[2]) == 2 * PASSES
        if command:
            got = json.loads(here[1])
            # figures that a broken merge would change: per-step counts, totals by name
            assert got["changes"]["op_calls"] or got["changes"]["kernel_calls"] or got["diff"]
            assert got["step"]["baseline_steps"] >= 2 and got["diff"]
    assert not whole_trace  # the client never assembled a run


def test_past_the_replay_limits_a_regression_is_exit_1_on_both_routes(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    # 18 ranks each, past replay.MAX_RANKS (16) with no limit lowered anywhere
    assert replay_mod.MAX_RANKS < 18
    even, slow = PAIRS[0]
    a = copies_job(tmp_path / "even", trace_files(DATA / even), 18)
    b = copies_job(tmp_path / "slow", trace_files(DATA / slow), 18)
    here, there = _both(capsys, scheduler, b, a, "--json")
    assert there[1] == here[1] and _passes(there[2]) == 2 * PASSES
    got = json.loads(here[1])
    assert here[0] == 1 and not got["passed"]  # the slow run regressed
    assert "step_time" in [r["what"] for r in got["regressions"]]
    assert "18/18 ranks done" in there[2] and not whole_trace
    # the same run against itself passes: exit 0 on both routes
    here, there = _both(capsys, scheduler, a, a)
    assert here[0] == 0 and there[1] == here[1] and not whole_trace


def test_a_run_within_the_limits_is_read_whole_and_the_other_by_rank(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    # the baseline (2 ranks) is within the replay's limits: its advice declines, read whole
    even, slow = PAIRS[0]
    b = copies_job(tmp_path / "slow", trace_files(DATA / slow), 18)
    for command in (["--json"], []):
        here, there = _both(capsys, scheduler, b, DATA / even, *command)
        assert there[1] == here[1], command
    assert whole_trace == [1, 1]  # the baseline, once a command


@pytest.mark.usefixtures("no_replay")
def test_a_declined_merge_reads_that_run_whole_and_the_same(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    monkeypatch: pytest.MonkeyPatch,
    whole_trace: list[int],
) -> None:
    from gpuviz.analysis import compare_parts

    real = compare_parts.merge_compare_parts
    seen: list[str] = []

    def declines_slow(parts):  # type: ignore[no-untyped-def]
        seen.append(parts[0].part.source)
        return "declined by the test" if "slow" in parts[0].part.source else real(parts)

    monkeypatch.setattr(compare_parts, "merge_compare_parts", declines_slow)
    even, slow = PAIRS[1]
    here, there = _both(capsys, scheduler, DATA / slow, DATA / even, "--json")
    assert there[1] == here[1] and len(seen) == 2
    assert whole_trace == [1]  # the new run alone


@pytest.mark.usefixtures("no_replay")
def test_the_env_switch_reads_both_runs_whole(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    monkeypatch: pytest.MonkeyPatch,
    whole_trace: list[int],
) -> None:
    monkeypatch.setenv(check_ranks.ENV, "0")
    even, slow = PAIRS[0]
    here, there = _both(capsys, scheduler, DATA / slow, DATA / even, "--json")
    assert there[1] == here[1] and whole_trace == [1, 1]


@pytest.mark.usefixtures("no_replay")
def test_a_bad_rank_file_is_bad_input_as_without_the_cluster(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path
) -> None:
    # check compares whole runs: a rank that fails is not skipped (the run read whole refuses
    # it), exit 2 naming the file, never 0, 1 or 3; nothing says a rank was skipped
    folder, three = base.bad_rank_job(tmp_path)
    for extra in ([], ["--cluster", scheduler]):
        rc, out, err = _run(capsys, "check", str(folder), "--against", str(three), *extra)
        assert rc == 2 and not out, err
        assert "rank-2.json.gz" in err.strip().splitlines()[-1]
        assert "skipped" not in err and err.count("rank-2.json.gz") == 1, err
