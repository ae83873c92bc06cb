"""The CLI's progress bar while a trace is read: it says about how long is left."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from rich.progress import Progress

from gpuviz.commands import reading

DATA = Path(__file__).parent / "data"


def test_terminal_bar_shows_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    monkeypatch.setattr(reading, "_stderr_is_terminal", lambda: True)
    clock = itertools.count(0.0, 0.5)  # each report half a second after the last
    monkeypatch.setattr(reading.time, "monotonic", lambda: next(clock))
    seen: list[Any] = []
    real_update = Progress.update

    def update(self: Progress, task: Any, **kw: Any) -> None:
        seen.append(kw.get("left"))
        real_update(self, task, **kw)

    monkeypatch.setattr(Progress, "update", update)
    trace = reading.read_trace(DATA / "streams_overlap.json.gz")
    assert len(trace.slices) > 0
    texts = [t for t in seen if t]
    assert texts, seen
    assert all(t.endswith("left") for t in texts)
