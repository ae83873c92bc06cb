"""``gpuviz summary`` prints a kept output on a re-run of an unchanged, cached trace (issue 25),
and computes again for another file, options, code, a damaged memo or with the cache off."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "analysis"))
from hardware_synth import write_run

from gpuviz.cli import main
from gpuviz.trace import cache_memo

DATA = Path(__file__).parent / "data"
HOUR_AGO = time.time() - 3600


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "traces"


def _settled(name: str, dest: Path) -> Path:
    out = dest / name
    shutil.copyfile(DATA / name, out)
    os.utime(out, (HOUR_AGO, HOUR_AGO))
    return out


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    assert main(["summary", *argv]) == 0
    out = capsys.readouterr()
    return out.out, out.err


def _memos(cache: Path) -> list[Path]:
    return sorted(cache.glob(f"*/{cache_memo.MEMO_PREFIX}*.json")) if cache.exists() else []


def _forge(memo: Path, stdout: str) -> None:
    """Rewrite a memo's output, its CRC made right: what is printed then came from it."""
    header, _ = memo.read_bytes()[9:].split(b"\n", 1)
    assert json.loads(header)["variant"]  # the layout: a CRC line, a JSON header, the output
    data = header + b"\n" + stdout.encode()
    memo.write_bytes(f"{zlib.crc32(data):08x}\n".encode() + data)


@pytest.mark.parametrize("mode", [["--json"], []], ids=["json", "text"])
def test_a_rerun_prints_the_kept_output_the_same_as_a_fresh_one(
    mode: list[str], cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _settled("dataparallel_seed_2gpu.json.gz", tmp_path)
    fresh = _run(capsys, str(path), *mode, "--no-cache")
    assert _memos(cache) == []
    first = _run(capsys, str(path), *mode)  # imports, caches, keeps the output
    (memo,) = _memos(cache)
    again = _run(capsys, str(path), *mode)
    assert first == fresh and again == fresh
    _forge(memo, "kept")
    assert _run(capsys, str(path), *mode) == ("kept\n", fresh[1]), "the memo was not used"


def test_the_unknown_device_line_comes_back_on_stderr(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = {"id": 0, "name": "Imaginary GPU 9000", "numSms": 7, "computeMajor": 12}
    path = write_run(tmp_path / "odd.json.gz", device=odd)  # a GPU outside the peaks table
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    fresh = _run(capsys, str(path), "--json", "--no-cache")
    assert "Imaginary GPU 9000" in fresh[1]
    assert _run(capsys, str(path), "--json") == fresh
    assert _memos(cache)
    assert _run(capsys, str(path), "--json") == fresh


def test_other_options_a_changed_file_or_other_code_compute_again(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _settled("dataparallel_seed_2gpu.json.gz", tmp_path)
    plain = _run(capsys, str(path), "--json")
    (memo,) = _memos(cache)
    _forge(memo, "stale")
    # Other peaks: another output, computed, kept beside the first.
    peaked = _run(capsys, str(path), "--json", "--peak-tflops", "100")
    assert peaked[0] != "stale\n" and json.loads(peaked[0])["mfu"] != json.loads(plain[0])["mfu"]
    assert len(_memos(cache)) == 2
    # Other code (an edited analysis in a checkout): computed again.
    monkeypatch.setattr(cache_memo, "code_fingerprint", lambda: "edited")
    assert _run(capsys, str(path), "--json") == plain
    monkeypatch.undo()
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(cache.parent))
    assert _run(capsys, str(path), "--json")[0] == "stale\n"  # the forged one, still there
    # Another file at the same path: another key, so another entry, the old one (and its
    # memos) deleted.
    shutil.copyfile(DATA / "streams_overlap.json.gz", path)
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    other = _run(capsys, str(path), "--json", "--no-cache")
    assert _run(capsys, str(path), "--json") == other
    assert not memo.exists()
    assert _run(capsys, str(path), "--json") == other


def test_a_damaged_memo_is_computed_again_and_replaced(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _settled("dataparallel_seed_2gpu.json.gz", tmp_path)
    first = _run(capsys, str(path), "--json")
    (memo,) = _memos(cache)
    data = bytearray(memo.read_bytes())
    data[len(data) // 2] ^= 0x01
    memo.write_bytes(bytes(data))
    assert _run(capsys, str(path), "--json") == first
    assert memo.read_bytes() != bytes(data), "the damaged memo was not replaced"
    assert _run(capsys, str(path), "--json") == first


def test_no_cache_keeps_and_reads_no_memo(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _settled("dataparallel_seed_2gpu.json.gz", tmp_path)
    first = _run(capsys, str(path), "--json")
    (memo,) = _memos(cache)
    _forge(memo, "kept")
    assert _run(capsys, str(path), "--json", "--no-cache") == first


def test_a_file_written_just_now_is_neither_cached_nor_memoized(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "new.json.gz"
    shutil.copyfile(DATA / "dataparallel_seed_2gpu.json.gz", path)
    first = _run(capsys, str(path), "--json")
    assert _memos(cache) == [] and _run(capsys, str(path), "--json") == first
