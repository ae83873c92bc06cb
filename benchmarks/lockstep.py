"""Processes that take turns, step by step: the driver of ``bench_profile.py --lockstep``.

A machine's pace may change within a process, in phases of about a second (a launch-bound step
at 6.3 or 9 ms on an H200), so two processes run one after the other see different phases.
Started at once and taking turns, one step each, the processes of a group meet the same
phases: step k of each runs in adjacent turns.

Each process is a script that takes ``--turns R,W`` (``benchmarks/profile_workload.py``,
``examples/gpt_train.py``): before a step it reads a byte from file descriptor R (nothing to
read: the driver is gone, so it stops), and when the step is done (the device synchronized) it
writes one to W. For step k the driver gives the turn to each process in an order that rotates
with k, and waits for each one's byte before the next goes.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Player:
    """One process of a group, with its end of the two pipes and its output files."""

    proc: subprocess.Popen[bytes]
    give: int
    """Write end: a byte gives the process its turn."""
    back: int
    """Read end: the process's byte back ends its turn."""
    stdout: Path
    stderr: Path
    started: float
    ended: float | None = None
    hung: bool = False
    """Killed for not exiting after its last step."""


class TurnError(Exception):
    """Player ``index`` failed its turn (exited, or took longer than allowed)."""

    def __init__(self, index: int, why: str) -> None:
        super().__init__(why)
        self.index = index


def start(
    commands: Sequence[tuple[list[str], dict[str, str]]],
    logs: Sequence[tuple[Path, Path]],
    cwd: Path,
    preexec_fn: Callable[[], None] | None = None,
) -> list[Player]:
    """Start every command at once, ``--turns R,W`` appended, stdout and stderr to ``logs``."""
    players: list[Player] = []
    try:
        for (cmd, env), (out, err) in zip(commands, logs, strict=True):
            child_r, give = os.pipe()
            back, child_w = os.pipe()
            try:
                with out.open("wb") as fo, err.open("wb") as fe:
                    proc = subprocess.Popen(
                        [*cmd, "--turns", f"{child_r},{child_w}"],
                        env=env,
                        cwd=cwd,
                        stdin=subprocess.DEVNULL,
                        stdout=fo,
                        stderr=fe,
                        pass_fds=(child_r, child_w),  # the others' pipes stay closed to it
                        preexec_fn=preexec_fn,
                    )
            except BaseException:
                os.close(give)
                os.close(back)
                raise
            finally:  # the child's ends: ours closed, so its exit reads as EOF
                os.close(child_r)
                os.close(child_w)
            players.append(Player(proc, give, back, out, err, time.perf_counter()))
    except BaseException:
        stop(players)
        raise
    return players


def play(
    players: Sequence[Player], steps: int, turn_timeout_s: float, deadline: float
) -> list[list[int]]:
    """Give ``steps`` rounds of turns; each round's order (player indices), or :class:`TurnError`.

    Round k starts with player ``k % n``, so no player always follows the same one. A turn may
    take ``turn_timeout_s`` (the first includes the process's start-up), and none goes past
    ``deadline`` (``time.perf_counter``).
    """
    n = len(players)
    # poll, not select: select refuses descriptors past 1023, which a long-lived process (a
    # test session) reaches
    waiters = []
    for p in players:
        waiter = select.poll()
        waiter.register(p.back, select.POLLIN | select.POLLHUP | select.POLLERR)
        waiters.append(waiter)
    rounds: list[list[int]] = []
    for k in range(steps):
        order = [(k + i) % n for i in range(n)]
        for i in order:
            p = players[i]
            try:
                os.write(p.give, b"x")
            except BrokenPipeError:
                raise TurnError(i, f"exited before step {k}") from None
            wait = min(turn_timeout_s, deadline - time.perf_counter())
            if not waiters[i].poll(max(0.0, wait) * 1000):
                raise TurnError(i, f"step {k} took more than {wait:.0f} s")
            if not os.read(p.back, 1):
                raise TurnError(i, f"exited during step {k}")
        rounds.append(order)
    return rounds


def finish(players: Sequence[Player], timeout_s: float) -> None:
    """Wait for the processes to exit (each after its last step); kill those that do not."""
    for p in players:
        os.close(p.give)
        p.give = -1
    deadline = time.perf_counter() + timeout_s
    try:
        for p in players:
            try:
                p.proc.wait(max(0.1, deadline - time.perf_counter()))
            except subprocess.TimeoutExpired:
                p.hung = True
            p.ended = time.perf_counter()
    finally:
        stop(players)


def stop(players: Sequence[Player]) -> None:
    """Kill the processes still running, reap them all, close the driver's pipe ends."""
    for p in players:
        if p.proc.poll() is None:
            p.proc.kill()
    for p in players:
        p.proc.wait()
        if p.ended is None:
            p.ended = time.perf_counter()
        for fd in (p.give, p.back):
            if fd >= 0:
                os.close(fd)
        p.give = p.back = -1


__all__ = ["Player", "TurnError", "finish", "play", "start", "stop"]
