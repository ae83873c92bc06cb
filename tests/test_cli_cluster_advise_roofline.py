"""``advise DIR --cluster`` rank by rank where ``low_mfu`` and ``memory_bound_hot`` fire (issue
51), against a LocalCluster of two worker processes: the JSON and text are the local path's
byte for byte (the folder read whole and advised here), the job's op shapes merged from the
workers' per-rank sums and sent with phase 2, and the client never assembles the whole trace
(the whole-trace route on the cluster fails the test if it is taken)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")

import test_cli_cluster as base

from gpuviz.analysis.advisor import replay as replay_mod
from tests.analysis.advisor.rank_jobs import make_job
from tests.analysis.hardware_synth import write_run

# That module's fixtures (a LocalCluster of two worker processes, each test's environment).
scheduler = base.scheduler
_env = base._env
_run = base._run
whole_trace = base.whole_trace


@pytest.fixture
def no_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's limits below every folder's size: off read whole, the by-rank gate open."""
    monkeypatch.setattr(replay_mod, "MAX_SLICES", -1)


@pytest.mark.usefixtures("no_replay")
def test_roof_rules_are_the_local_paths_without_the_whole_trace(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, whole_trace: list[int]
) -> None:
    # rank 0's GEMMs at 150 TFLOP/s (low_mfu), rank 1's adds at 0.5 TB/s (memory_bound_hot),
    # rank 1 3 ms later; the job's aten::mm: 12 calls at 150 and 3 at 750 TFLOP/s
    slow = write_run(tmp_path / "gemm.json.gz", gemm_tflops=150.0)
    mem = write_run(tmp_path / "add.json.gz", gemms=1, adds=40, add_tb_s=0.5)
    folder = make_job(tmp_path / "job", [slow, mem], [0, 3_000_000])
    for command in (["--json"], []):
        here = _run(capsys, "advise", str(folder), *command, "--no-cache")
        there = _run(capsys, "advise", str(folder), *command, "--no-cache", "--cluster", scheduler)
        assert here[0] == there[0] == 0, (here[2], there[2])
        assert there[1] == here[1], command  # byte for byte
        done = [line for line in there[2].splitlines() if "ranks done" in line]
        assert len(done) == 3  # pass 0, phase 1, phase 2: the by-rank route
        if command:
            found = {f["kind"]: f for f in json.loads(here[1])["findings"]}
            assert {"low_mfu", "memory_bound_hot"} <= set(found)
            assert f"({15 / (12 / 150.0 + 3 / 750.0):.1f} TFLOP/s)" in found["low_mfu"]["detail"]
    assert not whole_trace  # the client never assembled the folder
