"""The child-process executor: a Runner in a child process, events back as JSON lines.

Why a child: ``torch.profiler``'s stop and export hold the GIL for seconds on large runs, which
would freeze a GUI in the same process, and a crash in the child cannot take the caller down.

Wire: the parent starts ``python -m gpuviz.engine.child`` with the :class:`RunRequest` as JSON
in the environment variable ``GPUVIZ_REQUEST`` and a pipe whose write end is the fd named in
``GPUVIZ_EVENT_FD``. The child writes one event a line on that pipe (the form of
:mod:`gpuviz.engine.events`, never pickle); the workload's own prints go to the child's
stdout/stderr and never mix with events. The parent cancels by writing ``cancel`` to the
child's stdin. The environment is inherited whole (``NCCL_NVLS_ENABLE`` and friends included).

A child that exits without a terminal event (killed, segfault, ``os._exit``) is reported as
``Failed`` naming its exit signal or code, with the trace it announced (``TraceReady``) as the
partial trace.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from gpuviz.engine.events import (
    Cancelled,
    Event,
    EventDecodeError,
    Failed,
    Finished,
    TraceReady,
    decode_event,
    encode_event,
)
from gpuviz.engine.exit_status import signal_name

REQUEST_ENV = "GPUVIZ_REQUEST"
EVENT_FD_ENV = "GPUVIZ_EVENT_FD"
STDERR_TAIL_LINES = 60


def _stderr_fd() -> int | None:
    # The workload's prints go to stderr: stdout may carry ``--json``.
    try:
        return sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        return None


class ChildProcessRunner:
    """Runs a :class:`~gpuviz.engine.runner.RunRequest` in a child process; iterate for events.

    Same interface as :class:`~gpuviz.engine.runner.Runner`: iterate once, :meth:`cancel` from
    any thread. The request is checked in the parent first (bad input raises BadInputError
    here, not in the child).

    Parameters
    ----------
    request : RunRequest
        What to run.
    cancel_grace_s : float
        After a cancel, how long the child may take to finish its step and stop cleanly before
        it is killed.
    forward_stderr : bool
        Copy the child's stderr to this process's stderr as it comes (the CLI); its last lines
        are kept either way for ``Failed.traceback`` when the child dies.
    """

    def __init__(
        self,
        request: Any,
        *,
        cancel_grace_s: float = 60.0,
        forward_stderr: bool = True,
        check: bool = True,
    ) -> None:
        from gpuviz.engine.runner import default_trace_path
        from gpuviz.workloads.params import check_params
        from gpuviz.workloads.registry import resolve_workload

        self.request = request
        if check:
            # Refuse bad input here, with the parent's exit code 2, before starting anything.
            from gpuviz.engine.devices import resolve_devices

            spec = resolve_workload(request.workload)
            request.params = check_params(spec.params, request.params, workload=spec.name)
            resolve_devices(
                request.device, request.gpus, multi_gpu=spec.multi_gpu, workload=spec.name
            )
            if request.profile and not request.out:
                request.out = str(default_trace_path(spec.name, spec.multi_process))
        self.cancel_grace_s = cancel_grace_s
        self.forward_stderr = forward_stderr
        self.proc: subprocess.Popen[bytes] | None = None
        self._cancel = threading.Event()
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.trace_path: Path | None = Path(request.out) if request.out else None

    def cancel(self) -> None:
        """Ask the child to stop at its next step boundary (thread-safe); kills it after the grace."""
        if self._cancel.is_set():
            return
        self._cancel.set()
        proc = self.proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.write(b"cancel\n")
                proc.stdin.flush()
        if proc is not None:
            timer = threading.Timer(self.cancel_grace_s, self._kill_if_alive)
            timer.daemon = True
            timer.start()

    def interrupt(self) -> None:
        """Ctrl-C: the same as :meth:`cancel` (the child stops at its next step boundary)."""
        self.cancel()

    def _kill_if_alive(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()

    def _wait(self) -> int:
        assert self.proc is not None
        while True:
            try:
                return self.proc.wait()
            except KeyboardInterrupt:
                self.cancel()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            self._stderr_tail.append(line)
            if self.forward_stderr:
                with contextlib.suppress(Exception):
                    sys.stderr.write(line)
                    sys.stderr.flush()

    def __iter__(self) -> Iterator[Event]:
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)  # inherit everything: NCCL_NVLS_ENABLE=0 and friends stay set
        env[REQUEST_ENV] = json.dumps(self.request.to_json())
        env[EVENT_FD_ENV] = str(write_fd)
        pkg_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gpuviz.engine.child"],
                stdin=subprocess.PIPE,
                stdout=_stderr_fd() if self.forward_stderr else subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd,),
                env=env,
            )
        finally:
            os.close(write_fd)
        assert self.proc.stderr is not None
        err_thread = threading.Thread(
            target=self._read_stderr, args=(self.proc.stderr,), daemon=True
        )
        err_thread.start()
        terminal: Event | None = None
        trace: str | None = None
        try:
            with os.fdopen(read_fd, "rb") as pipe:
                while True:
                    try:
                        raw = pipe.readline()
                    except KeyboardInterrupt:
                        # Ctrl-C while waiting for the child: ask it to stop cleanly and keep
                        # reading, so its Cancelled (and partial trace) still arrive.
                        self.cancel()
                        continue
                    if not raw:
                        break
                    try:
                        event = decode_event(raw)
                    except EventDecodeError:
                        continue  # never trust a torn line; the terminal event decides
                    if isinstance(event, TraceReady):
                        trace = event.path
                    if isinstance(event, (Finished, Failed, Cancelled)):
                        terminal = event
                    yield event
            code = self._wait()
        except GeneratorExit:
            self._kill_if_alive()
            self.proc.wait()
            raise
        finally:
            err_thread.join(timeout=5)
            with contextlib.suppress(Exception):
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
        if terminal is None:
            if code < 0:
                what = f"the child process died of {signal_name(-code)} ({-code})"
            else:
                what = f"the child process exited with code {code} without finishing"
            if self._cancel.is_set() and code < 0:
                yield Cancelled(trace)
                return
            yield Failed(what, "".join(self._stderr_tail), trace)


def _child_main() -> int:
    """Entry point inside the child."""
    from gpuviz.engine.runner import Runner, RunRequest

    request = RunRequest.from_json(json.loads(os.environ[REQUEST_ENV]))
    fd = int(os.environ[EVENT_FD_ENV])
    out = os.fdopen(fd, "w", encoding="utf-8", buffering=1)
    lock = threading.Lock()

    def send(event: Event) -> None:
        line = encode_event(event) + "\n"
        with lock:
            out.write(line)
            out.flush()

    # Ctrl-C in a terminal reaches the whole process group; the parent decides, so the child
    # only stops through a cancel message (or when killed).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        runner = Runner(request, emit_async=send)
    except Exception as exc:
        send(Failed(f"{type(exc).__name__}: {exc}", ""))
        return 1

    def watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "cancel":
                runner.cancel()
                return

    threading.Thread(target=watch_stdin, daemon=True).start()
    for event in runner:
        send(event)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(_child_main())
