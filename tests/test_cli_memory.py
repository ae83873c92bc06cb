"""``gpuviz memory SNAP``: JSON contract, the text report, bad input (exit 2, nothing runs)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuviz.cli import main
from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

SNAPS = Path(__file__).parent / "data" / "snapshots"
DEVICE_KEYS = {
    "device",
    "segments",
    "reserved_bytes",
    "allocated_bytes",
    "active_blocks",
    "inactive_blocks",
    "largest_free_block_bytes",
    "fragmentation",
    "peak_allocated_bytes",
    "peak_time_us",
    "oom",
    "top_sites",
    "top_sites_at_peak",
}


def _json(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    assert main(["memory", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_json_contract_on_the_oom_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    path = SNAPS / "snap_oom.pickle"
    j = _json(capsys, path)
    assert j["source"] == str(path)
    (d,) = j["devices"]
    assert DEVICE_KEYS <= set(d)
    stats = json.loads((SNAPS / "snap_oom.torch_stats").read_text())
    assert d["peak_allocated_bytes"] == stats["max_memory_allocated"]
    assert d["oom"]["request_bytes"] == 352 << 20
    assert d["oom"]["free_bytes"] > 0
    site = d["top_sites_at_peak"][0]
    assert set(site) >= {"site", "function", "bytes", "blocks"}
    assert site["site"] == "record_round2.py:326" and site["function"] == "snap_oom"


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(SNAPS / "snap_oom.pickle")]) == 0
    out = capsys.readouterr().out
    assert "OUT OF MEMORY" in out and "asked for 352.00 MiB" in out
    assert "top sites at the peak" in out and "record_round2.py:326" in out
    assert main(["memory", str(SNAPS / "snap_wrapped.pickle.gz")]) == 0
    out = capsys.readouterr().out
    assert "already live when it began" in out
    assert "peak allocated: 1.39 GiB" in out  # 1490740224 bytes, torch's max_memory_allocated
    assert "OUT OF MEMORY" not in out


def test_names_from_the_file_cannot_drive_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    raw, _ = make_snapshot(400, user_file="/home/me/\x1b]52;c;ZXZpbA==\x07train.py")
    path = write_snapshot(tmp_path / "esc.pickle", raw)
    assert main(["memory", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]52" in out


def test_empty_snapshot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "e.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": []}))
    assert main(["memory", str(path)]) == 0
    assert "no allocator activity" in capsys.readouterr().out
    assert _json(capsys, path)["devices"] == []


class _Planted:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.command,))


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a pickle at all",
        pickle.dumps([1, 2, 3]),
        pickle.dumps({"segments": [], "device_traces": []})[:-5],
        "planted",
    ],
    ids=["empty", "not-a-pickle", "something-else", "truncated", "planted-class"],
)
def test_bad_input_exit_2_one_line_nothing_runs(
    content: bytes | str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    if content == "planted":
        content = pickle.dumps({"segments": [_Planted(f"touch {marker}")], "device_traces": []})
    path = tmp_path / "bad.pickle"
    path.write_bytes(content)  # type: ignore[arg-type]
    assert main(["memory", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err
    assert not marker.exists()


def test_missing_file_and_real_entry_point(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpuviz", "memory", str(tmp_path / "missing.pickle")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert "missing.pickle" in proc.stderr


def test_synthetic_figures_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    raw, truth = make_snapshot(6000, max_entries=2000, seed=5)
    path = write_snapshot(tmp_path / "w.pickle", raw)
    (d,) = _json(capsys, path)["devices"]
    assert d["peak_allocated_bytes"] == truth.window_peak_bytes
    assert d["allocated_bytes"] == truth.live_bytes
    assert d["reserved_bytes"] == truth.reserved_bytes


def test_top_must_be_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", str(SNAPS / "snap_oom.pickle"), "--top", "-1"]) == 2
    err = capsys.readouterr().err
    assert err == "gpuviz memory: --top -1: must be 0 or more\n"
    assert main(["memory", str(SNAPS / "snap_oom.pickle"), "--top", "0", "--json"]) == 0
    assert all(d["top_sites"] == [] for d in json.loads(capsys.readouterr().out)["devices"])


def _hostile(kind: str) -> dict[str, Any]:
    raw, _ = make_snapshot(200, seed=1)
    if kind == "negative block":
        raw["segments"][0]["blocks"][0]["size"] = -(2**40)
    elif kind == "negative segment":
        raw["segments"][0]["total_size"] = -5
    elif kind == "negative entry":
        raw["device_traces"][0][3]["size"] = -1
    elif kind == "no frames":
        for e in raw["device_traces"][0]:
            e["frames"] = []
        for s in raw["segments"]:
            s["frames"] = []
            for b in s["blocks"]:
                b["frames"] = []
    return raw


@pytest.mark.parametrize("kind", ["negative block", "negative segment", "negative entry"])
def test_negative_sizes_exit_2_one_line(
    kind: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_snapshot(tmp_path / "neg.pickle", _hostile(kind))
    assert main(["memory", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "GiB" not in captured.err
    assert captured.err.count("\n") == 1 and "cannot be negative" in captured.err


def test_a_snapshot_without_frames_reports_one_site(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_snapshot(tmp_path / "noframes.pickle", _hostile("no frames"))
    (d,) = _json(capsys, path)["devices"]
    assert [s["site"] for s in d["top_sites_at_peak"]] == ["(no stack recorded)"]
    assert d["window_start_live_bytes"] == 0  # history from the start: nothing from before it
    assert d["top_sites_at_peak"][0]["bytes"] == d["peak_allocated_bytes"]
