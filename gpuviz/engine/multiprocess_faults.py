"""The parent's record of each rank of a multi-process run, and how a failed or hung run is named.

:class:`Rank` is what :mod:`gpuviz.engine.multiprocess` keeps per rank. :func:`first_failure`
names the rank that failed first (a rank that died without a word is the cause of its peers'
errors, never the other way round); :func:`hang_failure` names the hung rank from the ranks'
main-thread stacks (faulthandler dumps, read by :func:`main_frames`): the one in its own code,
rather than waiting inside torch for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuviz.engine.events import Event, Failed
from gpuviz.engine.exit_status import signal_name


@dataclass
class Rank:
    """The parent's record of one rank: its process, event file, progress and end."""

    rank: int
    device: str
    proc: Any
    events_path: Path
    stack_path: Path
    offset: int = 0
    partial: bytes = b""
    last_event_s: float = 0.0
    stepping: bool = False
    step: int = 0
    total: int | None = None
    terminal: Event | None = None
    terminal_t_ns: int = 0
    trace: str | None = None
    t_offset_s: float = 0.0
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pid(self) -> int | None:
        return getattr(self.proc, "pid", None)

    def alive(self) -> bool:
        return bool(self.proc.is_alive())


class RankFailure(Exception):
    """One or more ranks failed, died or hung (the message names them)."""

    def __init__(self, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.traceback = traceback


def first_failure(ranks: list[Rank]) -> RankFailure:
    """Name the rank that failed first. A rank that died without a word is the cause of
    its peers' errors (they lose their connection to it), never the other way round; among
    ranks that reported ``Failed``, the earliest report wins."""
    failed = sorted(
        (rk for rk in ranks if isinstance(rk.terminal, Failed)),
        key=lambda rk: rk.terminal_t_ns,
    )
    dead = [rk for rk in ranks if rk.terminal is None and rk.proc.exitcode is not None]
    parts = []
    for rk in dead:
        code = rk.proc.exitcode
        if code is not None and code < 0:
            parts.append(f"rank {rk.rank} died of {signal_name(-code)}")
        else:
            parts.append(f"rank {rk.rank} exited with code {code} without finishing")
    traceback = ""
    if failed:
        first, rest = (None, failed) if dead else (failed[0], failed[1:])
        if first is not None:
            err = first.terminal.error  # type: ignore[union-attr]
            parts.append(f"rank {first.rank} failed: {err}")
            traceback = first.terminal.traceback or ""  # type: ignore[union-attr]
        if rest:
            others = rank_list([rk.rank for rk in rest])
            parts.append(f"then rank{'s' if len(rest) > 1 else ''} {others} failed too")
            if not traceback:
                traceback = "\n".join(
                    f"rank {rk.rank}: {rk.terminal.error}"  # type: ignore[union-attr]
                    for rk in rest
                )
    return RankFailure("; ".join(parts) or "a rank ended without finishing", traceback)


def hang_failure(
    running: list[Rank],
    silent: list[Rank],
    stacks: dict[int, list[str]],
    now: float,
    timeout_s: float,
) -> RankFailure:
    """Name the hung rank: of the ranks still running (all of them, since those that wait
    for a hung peer may not be overdue yet), the one whose main thread is in its own code
    rather than inside torch; when every stack is inside torch, the overdue ranks."""
    own = [rk for rk in running if stacks.get(rk.rank) and not in_torch(stacks[rk.rank])]
    blamed = own or silent
    lines = []
    for rk in blamed:
        where = innermost(stacks.get(rk.rank, []))
        lines.append(
            f"rank {rk.rank} hung: no event for {now - rk.last_event_s:.1f} s "
            f"(--rank-timeout {timeout_s:g})" + (f", in {where}" if where else "")
        )
    for rk in running:
        if rk in blamed:
            continue
        where = innermost(stacks.get(rk.rank, []))
        if stacks.get(rk.rank) and in_torch(stacks[rk.rank]):
            lines.append(f"rank {rk.rank} waits inside torch ({where}), most likely for it")
        else:
            lines.append(f"rank {rk.rank} is still running" + (f" ({where})" if where else ""))
    detail = "\n\n".join(
        f"rank {r} main thread (most recent call first):\n" + "\n".join(frames)
        for r, frames in sorted(stacks.items())
    )
    return RankFailure("; ".join(lines), detail)


def rank_list(items: list[int]) -> str:
    return ", ".join(str(i) for i in items)


def main_frames(path: Path) -> list[str]:
    """The main thread's frames from a faulthandler dump (most recent first)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = text.splitlines()
    if not lines or not lines[0].startswith("main "):
        return []
    ident = lines[0].split()[1].lower()
    frames: list[str] = []
    taking = False
    for line in lines[1:]:
        if line.startswith(("Thread ", "Current thread ")):
            if taking and frames:
                break
            taking = ident in line.lower()
            frames = []
            continue
        if taking and line.strip().startswith("File "):
            frames.append(line.strip())
    return frames


def in_torch(frames: list[str]) -> bool:
    """Whether the innermost frame is inside torch (a collective, a sync): waiting on others."""
    return bool(frames) and f"{os.sep}torch{os.sep}" in frames[0]


def innermost(frames: list[str]) -> str:
    if not frames:
        return ""
    # 'File "/x/y.py", line 12 in f' -> 'y.py:12 in f'
    f = frames[0]
    try:
        path = f.split('"')[1]
        rest = f.split('"', 2)[2].strip().lstrip(",").strip()
        line = rest.split()[1]
        func = rest.split(" in ", 1)[1]
        return f"{Path(path).name}:{line} in {func}"
    except (IndexError, ValueError):
        return f


__all__ = [
    "Rank",
    "RankFailure",
    "first_failure",
    "hang_failure",
    "in_torch",
    "innermost",
    "main_frames",
]
