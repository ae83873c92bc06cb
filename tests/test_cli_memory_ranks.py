"""``gpuviz memory DIR``: a folder of rank snapshots in one table, the same figures as each file's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.cli import main
from gpuviz.display import format_bytes


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["memory", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_json_is_each_files_figures_with_its_rank(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rank_snapshots: Path,
    workers: str,
) -> None:
    # the same figures in this process and in the pool of forked readers
    monkeypatch.setenv("GPUVIZ_SNAPSHOT_WORKERS", workers)
    j = _json(capsys, str(rank_snapshots))
    files = sorted(rank_snapshots.iterdir())
    assert [r["rank"] for r in j["ranks"]] == [0, 1, 2]
    peaks = {}
    for r, f in zip(j["ranks"], files):
        single = _json(capsys, str(f))
        assert r == {"rank": r["rank"], **single}
        assert r["source"] == str(f)
        peaks[r["rank"]] = max(d["peak_allocated_bytes"] for d in single["devices"])
    assert j["highest_peak_rank"] == max(peaks, key=lambda k: peaks[k])
    # the OOM snapshot (rank 1) keeps its OOM; the others have none
    assert [r["devices"][0]["oom"] is not None for r in j["ranks"]] == [False, True, False]


def test_text_table_and_the_highest_peak(
    capsys: pytest.CaptureFixture[str], rank_snapshots: Path
) -> None:
    j = _json(capsys, str(rank_snapshots))
    assert main(["memory", str(rank_snapshots)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(i for i, x in enumerate(lines) if x.startswith("rank"))
    for col in ("peak allocated", "reserved", "fragmentation", "largest free", "OOM"):
        assert col in lines[header]
    rows = lines[header + 1 : header + 4]
    for r, row in zip(j["ranks"], rows):
        d = r["devices"][0]
        cells = row.split()
        assert cells[0] == str(r["rank"]) and cells[1] == "cuda:0"
        assert format_bytes(d["peak_allocated_bytes"]) in row
        assert format_bytes(d["reserved_bytes"]) in row
        assert f"{d['fragmentation']:.2f}" in row
        assert format_bytes(d["largest_free_block_bytes"]) in row
        assert ("asked" in row) == (d["oom"] is not None)
    best = j["highest_peak_rank"]
    (line,) = [x for x in lines if x.startswith("highest peak")]
    peak = j["ranks"][best]["devices"][0]["peak_allocated_bytes"]
    assert f"rank {best} " in line and format_bytes(peak) in line


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_bad_file_exits_2_naming_it(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rank_snapshots: Path,
    workers: str,
) -> None:
    monkeypatch.setenv("GPUVIZ_SNAPSHOT_WORKERS", workers)
    good = _json(capsys, str(rank_snapshots))
    bad = rank_snapshots / "rank-3.memory.pickle"
    bad.write_bytes(b"not a pickle at all")
    # issue 47, item 15: the bad file is named (exit 2) and the other ranks are still shown
    assert main(["memory", str(rank_snapshots)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and str(bad) in captured.err
    assert "Traceback" not in captured.err
    rows = [x.split()[0] for x in captured.out.splitlines() if x.strip()[:1].isdigit()]
    assert rows == ["0", "1", "2"]
    assert "(3 ranks; 1 file unreadable, named on stderr)" in captured.out
    assert main(["memory", str(rank_snapshots), "--json"]) == 2
    captured = capsys.readouterr()
    j = json.loads(captured.out)
    assert j["ranks"] == good["ranks"]
    assert len(j["unreadable"]) == 1 and j["unreadable"][0].startswith(str(bad))


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_snapshot_of_the_wrong_structure_is_named_and_the_others_shown(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rank_snapshots: Path,
    workers: str,
) -> None:
    # issue 47, item 15: this file ended the whole folder in a TypeError traceback
    import pickle

    monkeypatch.setenv("GPUVIZ_SNAPSHOT_WORKERS", workers)
    bad = rank_snapshots / "rank-1.memory.pickle"
    bad.write_bytes(pickle.dumps({"segments": "abc", "device_traces": 5}))
    assert main(["memory", str(rank_snapshots)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"gpuviz memory: {bad}: segments: expected a list, got str\n"
    rows = [x.split()[0] for x in captured.out.splitlines() if x.strip()[:1].isdigit()]
    assert rows == ["0", "2"]
    for other in ("rank-0.memory.pickle", "rank-2.memory.pickle"):
        (rank_snapshots / f"{other}.gz").unlink()
        (rank_snapshots / other).write_bytes(pickle.dumps({"segments": "abc"}))
    # every rank bad: nothing to show, the first named
    assert main(["memory", str(rank_snapshots)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "rank-0.memory.pickle: segments" in captured.err


def test_a_folder_without_snapshots_and_a_duplicate_rank(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rank_snapshots: Path
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["memory", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no rank-N.memory.pickle" in err
    (rank_snapshots / "rank-1.memory.pickle.gz").write_bytes(b"")
    assert main(["memory", str(rank_snapshots)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rank 1" in err


def test_a_trace_folder_with_snapshots(
    capsys: pytest.CaptureFixture[str], rank_snapshots: Path, data_dir: Path
) -> None:
    # torchrun's --out DIR: rank-N.json.gz beside rank-N.memory.pickle; the traces are not read
    for r in range(3):
        (rank_snapshots / f"rank-{r}.json.gz").write_bytes(b"not read by gpuviz memory")
    j = _json(capsys, str(rank_snapshots))
    assert [r["rank"] for r in j["ranks"]] == [0, 1, 2]


def test_a_folder_name_cannot_drive_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rank_snapshots: Path
) -> None:
    evil = tmp_path / "ev\x1b[31mil"
    rank_snapshots.rename(evil)
    assert main(["memory", str(evil)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "ev\\x1b[31mil" in out
    (evil / "rank-4.memory.pickle").write_bytes(b"junk")
    assert main(["memory", str(evil)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1 and "rank-4.memory.pickle" in err
