"""The loader reads device 0's history while the unpickler still makes it (issue 25)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from snapshot_columns import snapshot_columns

import gpuviz.trace.allocator_snapshot as snapshot_mod
import gpuviz.trace.allocator_trace as trace_mod
from gpuviz.trace.allocator_snapshot import load_snapshot, snapshot_from_data
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.synthetic_snapshot import make_snapshot


def _spy_load(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What the watch had done when the unpickler finished."""
    seen: dict[str, Any] = {}
    load = snapshot_mod.load_snapshot_data

    def spy(*args: Any, **kwargs: Any) -> Any:
        data = load(*args, **kwargs)
        watch = kwargs["watch"]
        seen["done"] = watch.reader.done
        seen["is_trace"] = watch.trace is data["device_traces"][0]
        seen["nones"] = sum(e is None for e in data["device_traces"][0])
        return data

    monkeypatch.setattr(snapshot_mod, "load_snapshot_data", spy)
    return seen


@pytest.mark.parametrize("gz", [False, True])
def test_history_is_read_while_unpickling(
    gz: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, _ = make_snapshot(8000, seed=9, max_entries=5000, oom=True, record_stream=True)
    blob = pickle.dumps(raw)
    assert len(blob) > 4 * 65536  # several pickle frames: the watch runs between them
    path = tmp_path / ("s.pickle.gz" if gz else "s.pickle")
    path.write_bytes(gzip.compress(blob) if gz else blob)
    want = snapshot_from_data(pickle.loads(blob), "s")
    seen = _spy_load(monkeypatch)
    monkeypatch.setattr(trace_mod, "TRACE_CHUNK", 100)
    got = load_snapshot(path)
    n = len(raw["device_traces"][0])
    # most of the history was columns (and its dicts freed) before the unpickler ended
    assert seen["is_trace"] and 0 < seen["done"] == seen["nones"] < n
    assert seen["done"] > n // 2
    for a, b in zip(snapshot_columns(want), snapshot_columns(got), strict=True):
        np.testing.assert_array_equal(a, b)
    assert got.annotations.time_us.tolist() == want.annotations.time_us.tolist()


def test_small_history_is_read_after_unpickling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, _ = make_snapshot(4000, seed=9)
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(raw))
    seen = _spy_load(monkeypatch)  # chunks of 65,536 entries: none is complete during the load
    got = load_snapshot(path)
    assert seen["is_trace"] and seen["done"] == 0
    for a, b in zip(
        snapshot_columns(snapshot_from_data(raw, "s")), snapshot_columns(got), strict=True
    ):
        np.testing.assert_array_equal(a, b)


def test_bad_entry_read_during_the_load_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, _ = make_snapshot(4000, seed=9)
    raw["device_traces"][0][1234]["size"] = -7
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(raw))
    seen = _spy_load(monkeypatch)
    monkeypatch.setattr(trace_mod, "TRACE_CHUNK", 100)
    with pytest.raises(TraceFormatError, match=r"device_traces\[0\]\[1234\].*'size' is -7"):
        load_snapshot(path)
    assert not seen  # raised from inside the unpickler's read, as it was


def test_a_list_after_the_key_that_is_not_the_history_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the key's first appearance is followed by an empty list and a list of entries that are
    # not device 0's history: read (and emptied) during the load, so the file is refused
    raw, _ = make_snapshot(4000, seed=9)
    decoy = [dict(e) for e in raw["device_traces"][0]]
    odd = {"x": ["device_traces", [], decoy], **raw}
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(odd))
    monkeypatch.setattr(trace_mod, "TRACE_CHUNK", 100)
    with pytest.raises(TraceFormatError, match="not device 0's history"):
        load_snapshot(path)
    # read after the load (no chunk completes during it), the same file is a snapshot
    monkeypatch.setattr(trace_mod, "TRACE_CHUNK", 1 << 16)
    assert len(load_snapshot(path).trace_columns(0)) == len(raw["device_traces"][0])
