"""``gpuviz open`` of hostile allocator snapshots: an error line, never a traceback from a slot."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot


def _open(path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    args = ["open", str(path), "--view", "memory", "--screenshot", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=180,
    )


def _lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]


@pytest.mark.parametrize("kind", ["negative block", "deep tuple key"])
def test_bad_snapshot_is_one_error_line(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "bad.pickle"
    if kind == "negative block":
        raw, _ = make_snapshot(200, seed=1)
        raw["segments"][0]["blocks"][0]["size"] = -(2**40)
        write_snapshot(path, raw)
    else:
        path.write_bytes(b"\x80\x02}" + b")" + b"\x85" * 1_000_000 + b"K\x01s.")
    out = tmp_path / "out.png"
    r = _open(path, out)
    assert r.returncode == 2, r.stderr
    (line,) = _lines(r.stderr)
    assert line.startswith(str(path)) and "Traceback" not in r.stderr
    assert not out.exists()


def test_snapshot_without_frames_opens(tmp_path: Path) -> None:
    raw, _ = make_snapshot(200, seed=1)
    for e in raw["device_traces"][0]:
        e["frames"] = []
    for s in raw["segments"]:
        s["frames"] = []
        for b in s["blocks"]:
            b["frames"] = []
    path = tmp_path / "noframes.pickle"
    path.write_bytes(pickle.dumps(raw))
    out = tmp_path / "out.png"
    r = _open(path, out)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and out.stat().st_size > 0
