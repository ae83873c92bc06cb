"""The import's forked children as processes (:class:`gpuviz.trace.kineto_worker._Forked`):
how they end, are waited for and are stopped. What they decode is tested through the
importer, in ``test_kineto_parallel.py``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuviz.trace import kineto_wire, kineto_worker

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked children need fork")


def _fork(returned: int) -> kineto_worker._Forked:
    """A forked child, as a Worker makes one; were the child ever to come back out of the
    constructor, it says so on ``returned`` and leaves (so the test runs on in one process)."""
    parent = os.getpid()
    scratch = [kineto_wire.scratch() for _ in range(2 * kineto_wire.DEPTH)]
    child = kineto_worker._Forked(
        scratch[: kineto_wire.DEPTH], scratch[kineto_wire.DEPTH :], False, ()
    )
    if os.getpid() != parent:
        os.write(returned, b"returned")
        os._exit(0)
    for fd in scratch:
        os.close(fd)
    return child


@pytest.fixture
def returned() -> tuple[int, int]:
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def _said(fds: tuple[int, int]) -> bytes:
    """What the children wrote on the ``returned`` pipe (nothing, if none came back)."""
    r, w = fds
    os.close(w)
    out = b""
    while chunk := os.read(r, 64):
        out += chunk
    return out


def test_a_child_whose_loop_fails_exits_with_status_1_and_never_returns(
    monkeypatch: pytest.MonkeyPatch, returned: tuple[int, int]
) -> None:
    def broken(*args: object) -> int:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(kineto_worker, "serve", broken)
    child = _fork(returned[1])
    assert child.wait(timeout=30) == 1
    assert _said(returned) == b"", "the child came back into the importer's code"


def test_a_child_that_is_asked_to_stop_exits_with_status_0(returned: tuple[int, int]) -> None:
    child = _fork(returned[1])
    child.stdin.close()  # end of input: the child's loop returns 0
    assert child.wait(timeout=30) == 0
    assert child.wait() == 0, "the status is kept once the child is reaped"
    child.stdout.close()
    assert _said(returned) == b""


@pytest.mark.parametrize("pidfd", [True, False])
def test_waiting_on_time_for_a_child_that_goes_on_raises_and_kill_stops_it(
    monkeypatch: pytest.MonkeyPatch, returned: tuple[int, int], pidfd: bool
) -> None:
    def stuck(*args: object) -> int:
        time.sleep(60)
        return 0

    monkeypatch.setattr(kineto_worker, "serve", stuck)
    child = _fork(returned[1])
    if not pidfd:  # a system without pidfd_open: the wait looks every few ms instead
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    t = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(timeout=0.3)
    assert 0.25 <= time.monotonic() - t < 10
    child.kill()
    assert child.wait(timeout=30) == -signal.SIGKILL
    child.kill()  # once it is gone, a second kill does nothing
    child.stdin.close()
    child.stdout.close()
    assert _said(returned) == b""


def test_a_fork_that_fails_leaves_no_descriptor_open(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    before = set(os.listdir("/proc/self/fd")) if sys.platform == "linux" else None
    with pytest.raises(OSError):
        kineto_worker._Forked([], [], False, ())
    if before is not None:
        assert set(os.listdir("/proc/self/fd")) <= before


def test_asking_a_child_to_stop_twice_writes_nothing_the_second_time(tmp_path: Path) -> None:
    """The pool asks every child to stop, then its reaper thread closes each (which asks
    again): the second ask must not write the stop frame to the pipe's old descriptor number,
    which by then may be another file's (in CI it overwrote a trace's first 17 bytes)."""
    worker = kineto_worker.Worker(start="fork")
    number = worker.fds[0]  # the importer's end of the child's input pipe
    worker.ask_to_stop()
    other = tmp_path / "other.bin"
    other.write_bytes(b"\x1f\x8b" + bytes(range(1, 40)))
    fd = os.open(other, os.O_WRONLY)
    try:
        assert os.dup2(fd, number) == number  # the freed number now names another file
        worker.close()
    finally:
        os.close(fd)
        os.close(number)
    assert worker.proc.wait(timeout=30) == 0
    assert other.read_bytes() == b"\x1f\x8b" + bytes(range(1, 40))
