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


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        # issue 47, item 16: this ran 80 s at 8.1 GB (a list of 10**8 rows) before it answered
        (["--batch", "10", "--gpus", "100000000"], "--gpus 100000000: more than 120"),
        (["--batch", "10", "--gpus", "121"], "--gpus 121: more than 120"),
        (["--batch", str(2**63), "--gpus", "2"], f"--batch {2**63}: more than"),
    ],
)
def test_absurd_counts_are_refused_at_once(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    t0 = time.perf_counter()
    assert main(["split", *argv]) == 2
    assert time.perf_counter() - t0 < 1.0
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(f"gpuviz split: {said}")


def test_the_largest_counts_are_still_planned(capsys: pytest.CaptureFixture[str]) -> None:
    # the bounds refuse only what cannot be: 120 GPUs and an int64 batch are planned
    big = 2**63 - 1
    assert main(["split", "--batch", str(big), "--gpus", "120", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 120 and sum(rows) == big and rows[0] == -(-big // 120)


def test_one_row_is_singular(capsys: pytest.CaptureFixture[str]) -> None:
    # issue 47, item 20: "1 rows"
    assert main(["split", "--batch", "3", "--gpus", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["cuda:0", "2", "rows"]
    assert lines[2].split() == ["cuda:1", "1", "row"]
