"""``gpuviz summary DIR`` a rank at a time (:mod:`gpuviz.commands.summary_ranks`): when it is
used, that it prints what the folder read whole prints (here and in child processes), its
errors, and the memory limit (issue 25)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpuviz.cli import main
from gpuviz.commands import summary_ranks
from gpuviz.trace import memory_budget as mb
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import import_plan

DATA = Path(__file__).parent / "data"
FOLDER = DATA / "ddp_nccl_4rank"  # 4 ranks of an H200 DDP run: kernels, NCCL, memory events


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(mb.ENV, raising=False)
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "0")


@pytest.fixture
def paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which way each summary went: "ranks" or "whole"."""
    taken: list[str] = []
    real = summary_ranks.summarize_ranks

    def spy(*a: Any, **k: Any) -> Any:
        got = real(*a, **k)
        taken.append("whole" if got is None else "ranks")
        return got

    monkeypatch.setattr(summary_ranks, "summarize_ranks", spy)
    return taken


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["summary", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("form", [["--json"], []])
def test_without_the_cache_a_folder_goes_a_rank_at_a_time_and_prints_the_same(
    capsys: pytest.CaptureFixture[str], paths: list[str], form: list[str]
) -> None:
    whole = _run(capsys, str(FOLDER), *form)  # the cache on: read whole, and stored
    by_rank = _run(capsys, str(FOLDER), "--no-cache", *form)
    assert paths == ["whole", "ranks"]
    assert by_rank == whole and whole[0] == 0 and "rank" in whole[1]


def test_children_read_the_ranks_side_by_side(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, paths: list[str]
) -> None:
    want = _run(capsys, str(FOLDER), "--json")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")  # 2 children for the import: 3 here
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    files = [str(f) for f in trace_files(FOLDER)]
    assert summary_ranks._workers(files, 0) == 3
    assert _run(capsys, str(FOLDER), "--json", "--no-cache") == want
    assert paths == ["whole", "ranks"]


@pytest.mark.parametrize("children", ["0", "2"])
def test_a_bad_rank_file_is_named_as_the_whole_reading_names_it(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    children: str,
) -> None:
    folder = tmp_path / "ranks"
    shutil.copytree(FOLDER, folder)
    bad = folder / "rank-2.json.gz"
    text = gzip.decompress(bad.read_bytes())
    bad.write_bytes(gzip.compress(text[: len(text) // 2]))  # truncated
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", children)
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    whole = _run(capsys, str(folder), "--json")
    by_rank = _run(capsys, str(folder), "--json", "--no-cache")
    assert whole[0] == by_rank[0] != 0
    assert "rank-2.json.gz" in by_rank[2] and by_rank[1] == ""
    assert by_rank[2] == whole[2]


def _one_and_all(folder: Path) -> tuple[int, int]:
    """The memory-limit estimates of the folder's largest file alone, and of it whole."""
    files = [str(f) for f in trace_files(folder)]
    one = max(mb.estimate_bytes(mb.json_bytes(f), False) for f in files)
    return one, import_plan(files, 0).full_bytes


def test_a_limit_under_the_whole_folder_goes_a_rank_at_a_time_and_drops_nothing(
    capsys: pytest.CaptureFixture[str], paths: list[str], tmp_path: Path
) -> None:
    one, whole_bytes = _one_and_all(FOLDER)
    limit = (one + whole_bytes) // 2
    assert one < limit < whole_bytes
    want = _run(capsys, str(FOLDER), "--json")
    shutil.rmtree(tmp_path / "cache")  # its memo would answer the next run
    got = _run(capsys, str(FOLDER), "--json", "--max-memory", str(limit))  # the cache on
    assert paths == ["whole", "ranks"]
    assert got == want and "left out" not in got[2]


def test_a_folder_the_cache_holds_is_read_from_it_whatever_the_limit(
    capsys: pytest.CaptureFixture[str], paths: list[str], tmp_path: Path
) -> None:
    one, whole_bytes = _one_and_all(FOLDER)
    want = _run(capsys, str(FOLDER), "--json")  # imported whole, and stored
    for memo in (tmp_path / "cache").rglob("memo-*"):
        memo.unlink()  # else the kept output answers, and no reading is chosen
    got = _run(capsys, str(FOLDER), "--json", "--max-memory", str((one + whole_bytes) // 2))
    assert paths == ["whole", "whole"] and got == want


def test_a_limit_under_one_file_reads_whole_and_says_what_it_left_out(
    capsys: pytest.CaptureFixture[str], paths: list[str]
) -> None:
    one, _ = _one_and_all(FOLDER)
    rc, out, err = _run(capsys, str(FOLDER), "--json", "--no-cache", "--max-memory", "1M")
    assert rc == 0 and paths == ["whole"] and "left out" in err
    assert len(json.loads(out)["ranks"]) == 4
    files = [str(f) for f in trace_files(FOLDER)]
    assert summary_ranks._workers(files, one) == 0  # room for one: here, one at a time
    assert summary_ranks._workers(files, one - 1) is None


def test_a_lone_file_or_a_one_file_folder_is_read_whole(
    capsys: pytest.CaptureFixture[str], paths: list[str], tmp_path: Path
) -> None:
    shutil.copy(FOLDER / "rank-0.json.gz", tmp_path / "rank-0.json.gz")
    assert _run(capsys, str(FOLDER / "rank-1.json.gz"), "--no-cache", "--json")[0] == 0
    assert _run(capsys, str(tmp_path), "--no-cache", "--json")[0] == 0
    assert paths == ["whole", "whole"]


def test_ctrl_c_stops_every_child(tmp_path: Path) -> None:
    """Ctrl-C while the children read (here: raised from the progress of the first part)
    leaves no child behind."""
    import multiprocessing

    for i in range(12):
        shutil.copy(FOLDER / f"rank-{i % 4}.json.gz", tmp_path / f"rank-{i}.json.gz")
    files = [str(f) for f in trace_files(tmp_path)]
    seen: list[float] = []

    def progress(frac: float) -> None:
        seen.append(frac)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        summary_ranks._parts(files, None, 3, progress)
    # Stopped at the first report, long before the end. How many parts were done by then
    # depends on the machine's load (3 children read at once): 1 or 2 of 12 were seen.
    assert len(seen) == 1 and 0 < seen[0] <= 3 / 12
    assert not multiprocessing.active_children()


def test_a_child_killed_by_the_system_fails_the_command_and_names_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when the OOM killer ends a child: the command fails (exit 1), naming the file, and
    does not wait forever (``multiprocessing.Pool`` would)."""
    import multiprocessing
    import os
    import signal

    real = summary_ranks.part_of

    def dies_on_rank_0(path: str, override: Any) -> Any:
        if path.endswith("rank-0.json.gz"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, override)

    monkeypatch.setattr(summary_ranks, "part_of", dies_on_rank_0)  # the forked children's too
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "2")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    rc, out, err = _run(capsys, str(FOLDER), "--json", "--no-cache")
    assert rc == 1 and out == ""
    assert "rank-0.json.gz: the process reading it stopped" in err
    assert not multiprocessing.active_children()
