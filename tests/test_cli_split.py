"""``gpuviz split --batch B --gpus N``: the tutorial's tables (DESIGN.md) and bad values."""

from __future__ import annotations

import json

import pytest

from gpuviz.cli import main


@pytest.mark.parametrize(
    ("batch", "gpus", "rows"),
    [
        (30, 8, [4, 4, 4, 4, 4, 4, 4, 2]),
        (10, 8, [2, 2, 2, 2, 2, 0, 0, 0]),  # only 5 GPUs work
        (30, 4, [8, 8, 8, 6]),  # measured on H200s
        (10, 4, [3, 3, 3, 1]),
        (30, 2, [15, 15]),  # the DataParallel trace in tests/data
        (10, 2, [5, 5]),
        (0, 3, [0, 0, 0]),
        (7, 1, [7]),
    ],
)
def test_json_rows(
    batch: int, gpus: int, rows: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["split", "--batch", str(batch), "--gpus", str(gpus), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"batch": batch, "gpus": gpus, "rows": rows}


def test_text_names_idle_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["split", "--batch", "10", "--gpus", "8"]) == 0
    out = capsys.readouterr().out
    assert "2, 2, 2, 2, 2, 0, 0, 0" in out
    assert out.count("(idle)") == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["--batch", "-1", "--gpus", "2"],
        ["--batch", "10", "--gpus", "0"],
        ["--batch", "ten", "--gpus", "2"],
        ["--batch", "10"],
    ],
)
def test_bad_values_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["split", *argv])
    except SystemExit as exc:  # argparse's own errors exit from the parser
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
