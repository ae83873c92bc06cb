"""Replaying a recorded event stream (``gpuviz run --events E.jsonl``) as if it were a run.

Qt-free. :class:`EventReplay` has the Runner's interface (iterate once, :meth:`cancel` from any
thread), so the app's run worker drives it like a run, and the live views cannot tell the
difference. Recorded GPU streams are how the GPU side of the live path is tested on machines
without a GPU.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

MAX_GAP_S = 0.25
"""With pacing, no wait between two events is longer than this (long runs replay quickly)."""


class EventReplay:
    """The events of a recorded ``.jsonl`` stream, optionally paced on their ``t_s``.

    Parameters
    ----------
    path : str or PathLike
        The events file. ``TraceReady`` paths in it are resolved against its folder.
    speed : float
        0 replays as fast as possible; ``s > 0`` waits ``Δt_s / s`` between memory samples
        (each wait capped at :data:`MAX_GAP_S`).

    Raises
    ------
    gpuviz.engine.events.EventDecodeError
        While iterating, on a line that is not an event (it names the file and line).
    """

    def __init__(self, path: str | os.PathLike[str], speed: float = 0.0) -> None:
        self.path = os.fspath(path)
        self.speed = float(speed)
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Stop after the current event (thread-safe)."""
        self._cancel.set()

    def __iter__(self) -> Iterator[Any]:
        from gpuviz.engine.events import Cancelled, MemorySample, read_events

        last_t: float | None = None
        trace: str | None = None
        for event in read_events(self.path):
            if self._cancel.is_set():
                yield Cancelled(trace)
                return
            if isinstance(event, MemorySample) and self.speed > 0:
                if last_t is not None and event.t_s > last_t:
                    wait = min((event.t_s - last_t) / self.speed, MAX_GAP_S)
                    if self._cancel.wait(wait):
                        yield Cancelled(trace)
                        return
                last_t = event.t_s
            if type(event).__name__ == "TraceReady":
                trace = event.path  # type: ignore[union-attr]
            yield event


__all__ = ["MAX_GAP_S", "EventReplay"]
