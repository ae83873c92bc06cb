"""``gpuviz summary DIR`` of a serving folder a rank at a time (issue 50): the ``serving``
object is the one the folder read whole gives (each rank's steps, phases over all ranks)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.cli import main
from gpuviz.commands import summary_ranks
from tests.test_cli_summary_ranks import _env, paths  # noqa: F401 (fixtures: the cache, the path taken)

DATA = Path(__file__).parent / "data"
SGLANG = DATA / "serving" / "sglang_extend_qwen3_8b.json.gz"
GENERATE = DATA / "serving" / "gpu" / "hf_generate.json.gz"  # H100: 1 prefill, 15 decode steps
SHIFT_US = 1234.5
"""How much earlier rank 1's copy starts: the folder's zero is rank 1's, not rank 0's."""


@pytest.fixture(autouse=True)
def _by_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(summary_ranks.ENV, raising=False)


def _copy(src: Path, dst: Path, rank: int, shift_us: float) -> None:
    """``src`` as rank ``rank`` of 2, its events ``shift_us`` later."""
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    info = dict(doc.get("distributedInfo") or {"backend": "nccl"})
    info.update(rank=rank, world_size=2)
    info.pop("pg_config", None)  # one rank's process groups: not the pair's
    doc["distributedInfo"] = info
    for e in doc["traceEvents"]:
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] = e["ts"] + shift_us
    with gzip.open(dst, "wt") as f:
        json.dump(doc, f)


def _folder(src: Path, tmp_path: Path) -> Path:
    d = tmp_path / "ranks"
    d.mkdir()
    _copy(src, d / "rank-0.json.gz", 0, 0.0)
    _copy(src, d / "rank-1.json.gz", 1, -SHIFT_US)
    return d


def _summary(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    assert main(["summary", *args, "--json"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


@pytest.mark.parametrize("src", [SGLANG, GENERATE], ids=["sglang", "generate"])
def test_a_serving_folder_a_rank_at_a_time_has_the_whole_folders_serving_object(
    capsys: pytest.CaptureFixture[str],
    paths: list[str],  # noqa: F811
    tmp_path: Path,
    src: Path,
) -> None:
    folder = _folder(src, tmp_path)
    whole, _ = _summary(capsys, str(folder))  # the cache on: read whole
    by_rank, _ = _summary(capsys, str(folder), "--no-cache")
    assert paths == ["whole", "ranks"]
    assert by_rank["serving"] == whole["serving"]
    assert by_rank["mfu"] == whole["mfu"]

    # and the whole folder's object is right on its own: each rank's steps are those of the
    # file alone, shifted by the folder's zero (rank 1's, SHIFT_US earlier)
    one, _ = _summary(capsys, str(src), "--no-cache")
    alone = one["serving"]["steps"]
    steps = whole["serving"]["steps"]
    assert [s["rank"] for s in steps] == [0] * len(alone) + [1] * len(alone)
    for rank, shift in ((0, SHIFT_US), (1, 0.0)):
        mine = [s for s in steps if s["rank"] == rank]
        assert [s["start_us"] - shift for s in mine] == pytest.approx(
            [s["start_us"] for s in alone], abs=2e-3
        )
        keep = ("phase", "tokens", "duration_us", "busy_us", "gap_before_us", "bytes_read")
        assert [{k: s[k] for k in keep} for s in mine] == [{k: s[k] for k in keep} for s in alone]
    # phases count both ranks' steps: twice the steps and tokens, the same mean step
    for p1, p2 in zip(one["serving"]["phases"], whole["serving"]["phases"], strict=True):
        assert p2["steps"] == 2 * p1["steps"]
        assert p2["tokens"] == (None if p1["tokens"] is None else 2 * p1["tokens"])
        assert p2["mean_step_us"] == pytest.approx(p1["mean_step_us"], abs=1e-3)
    assert whole["serving"]["ttft_us"] == one["serving"]["ttft_us"]


def test_a_training_folder_a_rank_at_a_time_has_no_serving_object(
    capsys: pytest.CaptureFixture[str],
    paths: list[str],  # noqa: F811
) -> None:
    got, _ = _summary(capsys, str(DATA / "ddp_nccl_4rank"), "--no-cache")
    assert paths == ["ranks"]
    assert "serving" not in got
