"""The commands that load traces and the import cache, run as a user would (subprocesses)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def _gpuviz(cache: Path, *args: str, off: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GPUVIZ_CACHE_DIR=str(cache))
    env.pop("GPUVIZ_NO_CACHE", None)
    if off:
        env["GPUVIZ_NO_CACHE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def _entries(cache: Path) -> list[Path]:
    root = cache / "traces"
    return [p for p in root.iterdir() if not p.name.startswith(".")] if root.exists() else []


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    """A copy of a real trace, last modified an hour ago (the cache skips files just written)."""
    path = tmp_path / "dp.json.gz"
    shutil.copyfile(DATA / "dataparallel_seed_2gpu.json.gz", path)
    hour_ago = time.time() - 3600
    os.utime(path, (hour_ago, hour_ago))
    return path


def test_summary_stores_then_reuses_and_no_cache_bypasses(trace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _gpuviz(cache, "summary", str(trace), "--json")
    assert first.returncode == 0 and first.stderr == ""
    (entry,) = _entries(cache)
    stamp = (entry / "manifest.json").stat().st_mtime_ns
    time.sleep(0.05)
    again = _gpuviz(cache, "summary", str(trace), "--json")
    assert again.returncode == 0 and again.stdout == first.stdout
    # Read, not rewritten: the same entry, its last-use time moved on.
    assert _entries(cache) == [entry]
    assert (entry / "manifest.json").stat().st_mtime_ns > stamp
    text = _gpuviz(cache, "summary", str(trace))
    assert text.returncode == 0 and "GPU streams" in text.stdout

    other = tmp_path / "other-cache"
    plain = _gpuviz(other, "summary", str(trace), "--json", "--no-cache")
    assert plain.returncode == 0 and plain.stdout == first.stdout
    assert _entries(other) == [], "--no-cache wrote a cache entry"
    env_off = _gpuviz(other, "summary", str(trace), "--json", off=True)
    assert env_off.stdout == first.stdout and _entries(other) == []


def test_a_damaged_entry_gives_the_same_figures_and_no_error(trace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _gpuviz(cache, "summary", str(trace), "--json")
    (entry,) = _entries(cache)
    f = entry / "slices.dur_ns.npy"
    os.truncate(f, f.stat().st_size // 2)
    again = _gpuviz(cache, "summary", str(trace), "--json")
    assert (again.returncode, again.stderr, again.stdout) == (0, "", first.stdout)
    assert len(_entries(cache)) == 1


def test_export_takes_no_cache_and_writes_the_same_file_from_the_cache(
    trace: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    outs = []
    for i, extra in enumerate((["--no-cache"], [], [])):
        out = tmp_path / f"e{i}.json"
        r = _gpuviz(cache, "export", str(trace), "-o", str(out), *extra)
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert len(_entries(cache)) == 1
    assert outs[0] == outs[1] == outs[2]


def test_open_takes_no_cache(trace: Path, tmp_path: Path) -> None:
    pytest.importorskip("PySide6")
    cache = tmp_path / "cache"
    png = tmp_path / "t.png"
    r = _gpuviz(
        cache, "open", str(trace), "--no-cache", "--screenshot", str(png), "--size", "800x500"
    )
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 1000 and _entries(cache) == []
    r = _gpuviz(cache, "open", str(trace), "--screenshot", str(png), "--size", "800x500")
    assert r.returncode == 0, r.stderr
    assert len(_entries(cache)) == 1
