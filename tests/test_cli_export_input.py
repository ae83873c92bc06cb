"""``gpuviz export`` never writes over its own input (issue 47, item 17).

``gpuviz export X -o X`` truncated X. The input is compared by device and inode, so a symlink
or a hard link to it is the input too; a folder's output may not land in that folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from gpuviz.cli import main

DATA = Path(__file__).parent / "data"


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def lone(tmp_path: Path) -> Path:
    src = tmp_path / "t.json.gz"
    shutil.copyfile(DATA / "streams_overlap.json.gz", src)
    return src


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], *said: str) -> None:
    assert main(["export", *argv, "--no-cache"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("gpuviz export: ")
    for s in said:
        assert s in line, line


def test_the_same_file_is_refused(capsys: pytest.CaptureFixture[str], lone: Path) -> None:
    before = _digest(lone.parent)
    _refused(capsys, [str(lone), "-o", str(lone)], f"-o {lone}: is the trace's own input")
    assert _digest(lone.parent) == before


def test_through_a_symlink_or_hard_link(capsys: pytest.CaptureFixture[str], lone: Path) -> None:
    link = lone.with_name("link.json.gz")
    link.symlink_to(lone.name)
    hard = lone.with_name("hard.json.gz")
    os.link(lone, hard)
    before = _digest(lone.parent)
    _refused(capsys, [str(lone), "-o", str(link)], f"the same file as {lone}")
    _refused(capsys, [str(link), "-o", str(lone)], f"the same file as {link}")
    _refused(capsys, [str(lone), "-o", str(hard)], f"-o {hard}")
    # a relative spelling of the same path
    rel = os.path.relpath(lone)
    _refused(capsys, [str(lone), "-o", rel], "own input")
    assert _digest(lone.parent) == before


def test_per_rank_over_a_lone_rank_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # a lone file is written as rank-0.json.gz: into its own folder, that is the input
    src = tmp_path / "rank-0.json.gz"
    shutil.copyfile(DATA / "streams_overlap.json.gz", src)
    before = _digest(tmp_path)
    _refused(capsys, [str(src), "--per-rank", str(tmp_path)], "--per-rank", "holds the input")
    assert _digest(tmp_path) == before


def test_a_folders_output_may_not_go_into_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ranks = tmp_path / "ranks"
    shutil.copytree(DATA / "ddp_2rank", ranks)
    before = _digest(ranks)
    _refused(capsys, [str(ranks), "--per-rank", str(ranks)], "input folder")
    _refused(capsys, [str(ranks), "-o", str(ranks / "merged.json.gz")], "input folder")
    # the folder through a symlink
    alias = tmp_path / "alias"
    alias.symlink_to(ranks)
    _refused(capsys, [str(ranks), "--per-rank", str(alias)], "input folder")
    _refused(capsys, [str(alias), "-o", str(ranks / "m.json")], "input folder")
    assert _digest(ranks) == before


def test_per_rank_into_the_folder_of_a_lone_input(
    capsys: pytest.CaptureFixture[str], lone: Path, tmp_path: Path
) -> None:
    # rank-0.json.gz beside t.json.gz: not the input, but a rank file of that folder's run
    (tmp_path / "rank-0.json.gz").write_bytes(b"another run's rank 0")
    before = _digest(tmp_path)
    _refused(capsys, [str(lone), "--per-rank", str(tmp_path)], "holds the input")
    assert _digest(tmp_path) == before


def test_other_outputs_are_still_written(
    capsys: pytest.CaptureFixture[str], lone: Path, tmp_path: Path
) -> None:
    # beside the input, and per rank into a folder of their own
    out_dir = tmp_path / "per-rank"
    assert main(["export", str(lone), "-o", str(tmp_path / "out.json.gz"), "--no-cache"]) == 0
    assert main(["export", str(lone), "--per-rank", str(out_dir), "--no-cache"]) == 0
    out = capsys.readouterr().out.split()
    assert out == [str(tmp_path / "out.json.gz"), str(out_dir / "rank-0.json.gz")]
    assert (out_dir / "rank-0.json.gz").stat().st_size > 0


def test_the_library_refuses_too(lone: Path) -> None:
    # the app's Export writes through export_chrome: it refuses before opening the file
    from gpuviz.trace.chrome_export import OwnInputError, export_chrome, export_per_rank
    from gpuviz.trace.kineto import load_trace

    trace = load_trace(lone)
    before = lone.read_bytes()
    with pytest.raises(OwnInputError, match="own input"):
        export_chrome(trace, lone)
    moved = lone.with_name("rank-0.json.gz")
    lone.rename(moved)
    trace = load_trace(moved)
    with pytest.raises(OwnInputError, match="own input"):
        export_per_rank(trace, moved.parent)
    assert moved.read_bytes() == before


def test_the_refusal_of_an_evil_name_is_clean(
    capsys: pytest.CaptureFixture[str], lone: Path
) -> None:
    evil = lone.with_name("ev\x1b[31mil.json.gz")
    lone.rename(evil)
    assert main(["export", str(evil), "-o", str(evil), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "ev\\x1b[31mil.json.gz" in err and err.count("\n") == 1
