"""``gpuviz critical-path`` and ``gpuviz whatif``: JSON shape, text, steps, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuviz.cli import main

DATA = Path(__file__).parent / "data"
GLOO = DATA / "gloo_2rank_h100"
CATEGORIES = {"compute", "communication", "copies", "cpu", "waits"}


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_critical_path_json(capsys: pytest.CaptureFixture[str]) -> None:
    j = _json(capsys, ["critical-path", str(GLOO), "--step", "2", "--json", "--top", "3"])
    assert j["step"] == 2 and j["ranks"] == [0, 1]
    assert set(j["by_category"]) == CATEGORIES
    total = sum(v["us"] for v in j["by_category"].values())
    assert total == pytest.approx(j["span_us"], abs=0.01)
    assert j["span_us"] <= j["step_us"]
    # Rank 1 ran 18 matmuls to rank 0's 6 in this step: it is the straggler the path crosses.
    assert {r["rank"] for r in j["ranks_on_path"]} == {0, 1}
    assert j["kernels"][0]["rank"] == 1 and j["kernels"][0]["calls"] == 18
    assert len(j["kernels"]) <= 3 and len(j["ops"]) <= 3
    assert j["graph"]["edges"]["collective"] > 0


def test_critical_path_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["critical-path", str(GLOO), "--step", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("critical path of step 2 (rank 0, 1):")
    assert "communication" in out and "ranks on it:" in out


def test_whatif_removing_the_stragglers_matmuls(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["whatif", str(GLOO), "--step", "2", "--remove", "*sgemm*", "--rank", "1", "--json"]
    j = _json(capsys, argv)
    assert j["changes"][0]["matched_nodes"] == 18
    assert j["predicted_step_us"] < j["measured_step_us"]
    # Rank 0 waited for rank 1 in the all-reduce: both ranks' steps get shorter.
    assert all(r["predicted_us"] < r["measured_us"] for r in j["ranks"])
    # Rank 0's own matmuls are not on the path: removing them predicts no change.
    argv = ["whatif", str(GLOO), "--step", "2", "--remove", "*sgemm*", "--rank", "0", "--json"]
    j0 = _json(capsys, argv)
    assert j0["predicted_step_us"] == j0["measured_step_us"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["whatif", str(GLOO), "--remove", "no-such-kernel"], "no work named no-such-kernel"),
        (["whatif", str(GLOO), "--faster", "x=0"], "--faster x=0"),
        (["whatif", str(GLOO), "--faster", "x"], "--faster x"),
        (["whatif", str(GLOO)], "--faster NAME=FACTOR or --remove NAME"),
        (["whatif", str(GLOO), "--remove", "x", "--rank", "7"], "--rank 7"),
        (["critical-path", str(GLOO), "--step", "99"], "no step 99"),
        (["critical-path", str(DATA / "missing.json")], "no such file"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1
