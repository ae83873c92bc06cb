"""Every command that loads a trace tells what its import warned of: a file declaring no rank.

``gpuviz summary`` printed the import's warnings and ``gpuviz advise`` kept quiet, so an advice
over a folder whose ranks had been renumbered from file order read as if nothing was wrong;
``check`` and ``breakdown`` kept quiet too (issue 47, item 6). (A folder whose two files claim
one rank is no longer merged at all: tests/trace/test_one_job.py.)
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuviz.cli import main
from gpuviz.trace.kineto import import_trace

DATA = Path(__file__).parent / "data"
NOTE = "distributedInfo.rank ignored, ranks taken from file order:"


@pytest.fixture
def same_rank(tmp_path: Path) -> Path:
    """A copy of the 2-rank DDP folder whose rank-1 file declares no rank."""
    folder = tmp_path / "run"
    folder.mkdir()
    for i in (0, 1):
        d = json.loads(gzip.decompress((DATA / "ddp_2rank" / f"rank-{i}.json.gz").read_bytes()))
        if i == 1:
            del d["distributedInfo"]
        (folder / f"rank-{i}.json").write_text(json.dumps(d))
    return folder


def _note_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if NOTE in line]


@pytest.mark.parametrize(
    "argv",
    [
        ["summary"],
        ["advise"],
        ["advise", "--against", "SAME"],
        ["breakdown", "--by", "op"],
        ["breakdown", "--by", "step"],
        ["check", "--against", "SAME"],
    ],
    ids=["summary", "advise", "advise-against", "breakdown-op", "breakdown-step", "check"],
)
def test_the_report_warns_of_a_file_declaring_no_rank(
    argv: list[str], same_rank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [argv[0], str(same_rank)] + [str(same_rank) if a == "SAME" else a for a in argv[1:]]
    assert main([*args, "--no-cache"]) == 0
    out = capsys.readouterr().out
    lines = _note_lines(out)
    assert len(lines) == (2 if "SAME" in argv else 1), out[:2000]
    assert lines[0].startswith("  warning: ")
    assert lines[0].endswith(f"{same_rank / 'rank-1.json'} declares no rank")


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["advise"], ("import_warnings",)),
        (["breakdown", "--by", "op"], ("import_warnings",)),
        (["check", "--against", "SAME"], ("import_warnings", "new")),
    ],
    ids=["advise", "breakdown", "check"],
)
def test_json_carries_the_warnings(
    argv: list[str], where: tuple[str, ...], same_rank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [argv[0], str(same_rank)] + [str(same_rank) if a == "SAME" else a for a in argv[1:]]
    assert main([*args, "--json", "--no-cache"]) == 0
    got = json.loads(capsys.readouterr().out)
    for key in where:
        got = got[key]
    assert got[0].startswith(NOTE)
    clean = [str(DATA / "ddp_2rank") if a == str(same_rank) else a for a in args]
    assert main([*clean, "--json", "--no-cache"]) == 0
    assert "import_warnings" not in json.loads(capsys.readouterr().out)


def test_export_warns_on_stderr_and_lists_only_files_on_stdout(
    same_rank: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged.json.gz"
    assert main(["export", str(same_rank), "-o", str(out), "--no-cache"]) == 0
    cap = capsys.readouterr()
    assert cap.out.splitlines() == [str(out)]
    assert len(_note_lines(cap.err)) == 1 and cap.err.startswith("gpuviz export: warning: ")


def test_the_note_comes_before_any_skipped_event(tmp_path: Path) -> None:
    # 30 bad events a file would otherwise fill the samples that summary (5) and the app show.
    bad = {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": "?", "dur": 1}
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}
    for i, rank in enumerate([0, 1, None]):
        d: dict[str, object] = {"traceEvents": [bad] * 30 + [kernel]}
        if rank is not None:
            d["distributedInfo"] = {"rank": rank}
        (tmp_path / f"r{i}.json").write_text(json.dumps(d))
    trace = import_trace(tmp_path)
    assert trace.rank_values() == [0, 1, 2]
    first = trace.warnings.samples[0]
    assert first.startswith(NOTE) and first.endswith(f"{tmp_path / 'r2.json'} declares no rank")
    assert trace.warnings.count == 90  # the note is not a skipped event
    assert sum(NOTE in s for s in trace.warnings.samples) == 1
