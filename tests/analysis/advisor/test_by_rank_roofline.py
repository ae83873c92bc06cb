"""advise of a rank folder rank by rank where ``low_mfu`` and ``memory_bound_hot`` fire
(issue 51): their text prints an op shape's TFLOP/s, TB/s and roof share summed over all
ranks' calls of it, which phase 2 takes from the job's op shapes (the ranks' sums merged),
so the advice is that of the folder read whole, field for field, text and evidence included.

The truth is ``advise`` of the folder read whole; the job figures in the text are also checked
against a hand count from the synthetic runs' own parameters (``hardware_synth``: each call
runs at a set TFLOP/s or TB/s, so a shape's rate over two ranks is their harmonic mean).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import gpuviz.analysis.advisor.by_rank as by_rank
import gpuviz.analysis.breakdown_shapes as breakdown_shapes
from gpuviz.analysis.advisor import advise
from gpuviz.analysis.advisor import replay as replay_mod
from gpuviz.analysis.advisor.by_rank import advise_by_rank
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import load_trace
from tests.analysis.advisor.rank_jobs import DATA, make_job, read, write
from tests.analysis.hardware_synth import write_run

ROOF = ("low_mfu", "memory_bound_hot")
H100_RUNS = (
    DATA / "tl__h100__Falconsai_nsfw_image_detection__1016002.json.gz",
    DATA / "tl__h100__gaunernst_bert-small-uncased__1016001.json.gz",
)
"""Two real single-GPU recordings of an H100 (TraceLens's test data), where ``low_mfu``
fires: a job of two ranks made of them."""


@pytest.fixture
def no_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's limits below every folder's size: off read whole, gate open by rank."""
    monkeypatch.setattr(replay_mod, "MAX_SLICES", -1)


def _whole(folder: Path) -> dict[str, Any]:
    return advise(load_trace(str(folder))).to_json()


def _by_rank(folder: Path) -> by_rank.RankAdvice:
    return advise_by_rank([load_trace(str(f)) for f in trace_files(folder)])


def _harmonic(a: float, b: float) -> float:
    """The rate of equal work done once at ``a`` and once at ``b``."""
    return 2.0 / (1.0 / a + 1.0 / b)


def _jobs(tmp_path: Path) -> dict[str, tuple[Path, dict[str, str]]]:
    """Jobs of two synthetic ranks, each with what the finding's text must say of the job."""
    slow = write_run(tmp_path / "gemm150.json.gz", gemm_tflops=150.0)
    slower = write_run(tmp_path / "gemm100.json.gz", gemm_tflops=100.0)
    mem = write_run(tmp_path / "add050.json.gz", gemms=1, adds=40, add_tb_s=0.5)
    mem2 = write_run(tmp_path / "add040.json.gz", gemms=1, adds=40, add_tb_s=0.4)
    return {
        # aten::mm at 150 and 100 TFLOP/s: 120.0 over the job (either rank's alone: 150, 100)
        "low_mfu": (
            make_job(tmp_path / "mfu", [slow, slower], [0, 3_000_000]),
            {"low_mfu": f"({_harmonic(150.0, 100.0):.1f} TFLOP/s)"},
        ),
        # aten::add at 0.5 and 0.4 TB/s: 0.44 over the job
        "memory_bound_hot": (
            make_job(tmp_path / "mem", [mem, mem2], [0, 3_000_000]),
            {"memory_bound_hot": f"({_harmonic(0.5, 0.4):.2f} TB/s)"},
        ),
        # both, on different worst ranks: rank 0's slow GEMMs, rank 1's slow adds (its one
        # GEMM a step at 750 TFLOP/s: the job's aten::mm is 4 x 3 calls at 150, 1 x 3 at 750)
        "both": (
            make_job(tmp_path / "both", [slow, mem], [0, 3_000_000]),
            {"low_mfu": f"({15 / (12 / 150.0 + 3 / 750.0):.1f} TFLOP/s)"},
        ),
    }


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize("job", ["low_mfu", "memory_bound_hot", "both"])
def test_roof_rules_as_read_whole(tmp_path: Path, job: str) -> None:
    folder, says = _jobs(tmp_path)[job]
    whole = _whole(folder)
    kinds = {f["kind"]: f for f in whole["findings"]}
    for kind, text in says.items():
        assert text in kinds[kind]["detail"], kinds[kind]["detail"]  # the hand count
    assert set(kinds) & set(ROOF) == ({"low_mfu", "memory_bound_hot"} if job == "both" else {job})
    if job == "both":  # each on its own worst rank
        assert {e["rank"] for e in kinds["low_mfu"]["evidence"]} == {0}
        assert {e["rank"] for e in kinds["memory_bound_hot"]["evidence"]} == {1}
    got = _by_rank(folder)
    assert got.declined is None and got.advice is not None
    assert got.advice.to_json() == whole


@pytest.mark.usefixtures("no_replay")
def test_real_h100_recordings_as_read_whole(tmp_path: Path) -> None:
    # rank 0 an image model, rank 1 BERT (both bf16 inference on an H100), rank 1 3 ms later
    folder = make_job(tmp_path / "job", list(H100_RUNS), [0, 3_000_000])
    whole = _whole(folder)
    assert "low_mfu" in {f["kind"] for f in whole["findings"]}
    got = _by_rank(folder)
    assert got.declined is None and got.advice is not None
    assert got.advice.to_json() == whole


@pytest.mark.usefixtures("no_replay")
@pytest.mark.parametrize("job", ["low_mfu", "memory_bound_hot", "both"])
@pytest.mark.parametrize("how", ["the worst rank's sums", "no job shapes"])
def test_one_ranks_shapes_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, job: str, how: str
) -> None:
    # The equality above can fail: phase 2 given one rank's shapes, not the job's, prints that
    # rank's TFLOP/s or TB/s.
    folder, says = _jobs(tmp_path)[job]
    whole = _whole(folder)
    assert _by_rank(folder).advice.to_json() == whole  # type: ignore[union-attr]
    if how == "no job shapes":
        monkeypatch.setattr(breakdown_shapes, "with_job_shapes", lambda hw, shapes: hw)
    else:
        real = breakdown_shapes.job_shapes
        monkeypatch.setattr(
            by_rank, "job_shapes", lambda parts, peaks, exact: real(parts[-1:], peaks, exact)
        )
        if job == "both":  # rank 0's GEMMs are low_mfu's: give it rank 0's shapes alone
            monkeypatch.setattr(
                by_rank, "job_shapes", lambda parts, peaks, exact: real(parts[:1], peaks, exact)
            )
    got = _by_rank(folder)
    assert got.advice is not None and got.advice.to_json() != whole
    assert not any(text in f.detail for f in got.advice.findings for text in says.values())


def _plant(monkeypatch: pytest.MonkeyPatch, **fields: Any) -> None:
    """Every rank's :class:`~gpuviz.analysis.breakdown_shapes.RankShapes` given ``fields``."""
    real = breakdown_shapes.rank_shapes

    def planted(*args: Any, **kw: Any) -> breakdown_shapes.RankShapes:
        return dataclasses.replace(real(*args, **kw), **fields)

    monkeypatch.setattr(by_rank, "rank_shapes", planted)


def _edit(path: Path, edit: Any) -> None:
    doc = read(path)
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op":
            edit(e)
    write(doc, path)


@pytest.mark.usefixtures("no_replay")
def test_declines_flops_known_on_some_ranks(tmp_path: Path) -> None:
    # rank 1's aten::mm calls carry a recorded FLOP count no op does: read whole, the job's
    # shape has unknown FLOPs (memory_bound_hot's kind of op), rank 0 alone knows them
    folder, _ = _jobs(tmp_path)["low_mfu"]

    def bad_flops(e: dict[str, Any]) -> None:
        if e["name"] == "aten::mm":
            e["args"]["flops"] = 1e30

    _edit(folder / "rank1.json.gz", bad_flops)
    _whole(folder)  # the folder still advises read whole
    got = _by_rank(folder)
    assert got.advice is None and got.declined is not None
    assert "aten::mm's FLOPs are known on some ranks and not on others" in got.declined


@pytest.mark.usefixtures("no_replay")
def test_declines_shapes_on_some_ranks(tmp_path: Path) -> None:
    # rank 1 recorded without shapes: read whole, whether any op's shapes are read depends
    # on the folder's first and last ops (op_calls.SHAPE_PROBE), not each rank's
    folder, _ = _jobs(tmp_path)["low_mfu"]
    _edit(folder / "rank1.json.gz", lambda e: e["args"].pop("Input Dims"))
    got = _by_rank(folder)
    assert got.advice is None and got.declined is not None
    assert "some op calls have shapes and some not" in got.declined


@pytest.mark.usefixtures("no_replay")
def test_declines_sums_that_are_not_whole_numbers_where_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rank's FLOPs not whole numbers (a count of 1.5: float sums whose rounding depends on
    # their order): declined where a roof rule prints the sums, not where none fires.
    _plant(monkeypatch, exact=False)
    folder, _ = _jobs(tmp_path)["low_mfu"]
    got = _by_rank(folder)
    assert got.advice is None and got.declined is not None
    assert "not whole numbers" in got.declined
    modules = DATA / "ddp_modules_2rank"  # GEMMs on an H100, no roof rule fires
    assert not {f["kind"] for f in _whole(modules)["findings"]} & set(ROOF)
    assert _by_rank(modules).advice is not None


def test_hand_count_of_the_synthetic_rates(tmp_path: Path) -> None:
    # The generator's calls do run at the rates the texts are checked against.
    path = write_run(tmp_path / "r.json.gz", gemm_tflops=150.0, gemms=1, adds=1, add_tb_s=0.5)
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    k = [e for e in doc["traceEvents"] if e["cat"] == "kernel"]
    assert 2 * 8192**3 / (k[0]["dur"] * 1e-6) / 1e12 == pytest.approx(150.0)
    assert 3 * 2 * (1 << 24) / (k[1]["dur"] * 1e-6) / 1e12 == pytest.approx(0.5)


@pytest.mark.usefixtures("no_replay")
def test_graph_replays_decline_only_where_a_roof_rule_fires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read whole, a captured call counts once per replay matched over the whole trace: a job
    # with graph replays goes rank by rank where no roof rule prints its shapes (as before)...
    graphs = DATA / "graphs" / "gpu" / "manual_graph.json.gz"
    folder = make_job(tmp_path / "graphs", [graphs, graphs], [0, 3_000_000])
    whole = _whole(folder)
    assert whole["findings"] and not {f["kind"] for f in whole["findings"]} & set(ROOF)
    got = _by_rank(folder)
    assert got.advice is not None and got.advice.to_json() == whole
    # ...and declines where one does (a rank's calls said to be counted apart)
    _plant(monkeypatch, unmerged="graph replays (planted)")
    roof, _ = _jobs(tmp_path)["low_mfu"]
    got = _by_rank(roof)
    assert got.advice is None and got.declined is not None
    assert "graph replays (planted)" in got.declined
