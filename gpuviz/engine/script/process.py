"""The app's side of ``gpuviz profile``: the script in a child process, its events from a pipe.

:class:`ScriptProcess` starts ``PYTHON -m gpuviz profile --events-fd N … SCRIPT ARGS`` in the
working folder the user picked, with the environment variables added, and yields the events
the child writes on its pipe (the JSON-lines form of :mod:`gpuviz.engine.events`, never
pickle): the same stream as ``gpuviz run``'s child, so the app's live plots, replay and failure
handling serve both. Cancel sends the child SIGINT, which is Ctrl-C for the script: it stops
where it is and the child writes what was recorded (``Cancelled`` with the partial trace). A
child that has not ended :data:`CANCEL_GRACE_S` later gets SIGTERM (same handling), then
SIGKILL. A child that dies without a last event is reported as ``Failed`` with its exit status
and the last lines it printed.

The script's stdout and stderr are read here (a child must not write to the app's terminal
unasked): their last lines are kept for a failure, and ``on_output`` gets each line.

:func:`check_interpreter` tells whether a Python can run ``gpuviz profile`` (gpuviz and torch
import there), for the app's interpreter picker.

Torch-free: this runs in the app's process.
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from gpuviz.engine.events import (
    Cancelled,
    Event,
    EventDecodeError,
    Failed,
    Finished,
    TraceReady,
    decode_event,
)
from gpuviz.engine.exit_status import signal_name
from gpuviz.engine.script.options import ProfileOptions, profile_argv

CANCEL_GRACE_S = 30.0
"""After Cancel (SIGINT), how long the script may take to stop and write its trace."""
TERM_GRACE_S = 10.0
"""After SIGTERM, how long before SIGKILL."""
OUTPUT_TAIL_LINES = 80

PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
"""The folder that holds the ``gpuviz`` package this app runs from."""


@dataclass
class ScriptRun:
    """What the app runs: the options, and the child's interpreter, folder and variables.

    ``env`` holds the variables to add (or change); the rest of the app's environment is
    inherited (``NCCL_NVLS_ENABLE`` and friends included).
    """

    options: ProfileOptions
    python: str = sys.executable
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    def command(self, events_fd: int) -> list[str]:
        """The child's command line."""
        return [
            self.python,
            "-m",
            "gpuviz",
            "profile",
            "--events-fd",
            str(events_fd),
            *profile_argv(self.options),
        ]

    def environment(self) -> dict[str, str]:
        """The child's environment (see :func:`child_environment`)."""
        return child_environment(self.python, self.env)


def child_environment(python: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The app's environment, plus ``extra``, with gpuviz importable for the app's own Python.

    For the app's own interpreter, the folder that holds this gpuviz goes first on
    ``PYTHONPATH`` (the app may run from a source tree); another interpreter must have gpuviz
    installed (:func:`check_interpreter`).
    """
    env = dict(os.environ)
    env.update(extra or {})
    if _same_python(python, sys.executable):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _same_python(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


class ScriptProcess:
    """Runs a :class:`ScriptRun` in a child process; iterate once for its events.

    Same interface as the engine's other sources: iterate once (from any thread), call
    :meth:`cancel` from any thread. ``proc`` is the child while it runs.

    Parameters
    ----------
    run : ScriptRun
    on_output : callable, optional
        Called with each line the script prints (stdout and stderr), from a reader thread.
    cancel_grace_s : float
        See :data:`CANCEL_GRACE_S`.
    """

    def __init__(
        self,
        run: ScriptRun,
        on_output: Callable[[str], None] | None = None,
        cancel_grace_s: float = CANCEL_GRACE_S,
    ) -> None:
        self.run = run
        self.on_output = on_output
        self.cancel_grace_s = cancel_grace_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.output_tail: deque[str] = deque(maxlen=OUTPUT_TAIL_LINES)
        self._cancel = threading.Event()
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Ctrl-C for the script (SIGINT); SIGTERM and SIGKILL follow if it does not stop."""
        with self._lock:
            if self._cancel.is_set():
                return
            self._cancel.set()
            proc = self.proc
        if proc is not None:
            self._signal(proc, signal.SIGINT)
            t = threading.Timer(self.cancel_grace_s, self._escalate)
            t.daemon = True
            t.start()

    def _signal(self, proc: subprocess.Popen[bytes], sig: int) -> None:
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.send_signal(sig)

    def _escalate(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        self._signal(proc, signal.SIGTERM)
        try:
            proc.wait(TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            self._kill_if_alive()

    def _kill_if_alive(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()

    def _read_output(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            self.output_tail.append(line)
            if self.on_output is not None:
                with contextlib.suppress(Exception):
                    self.on_output(line)

    def __iter__(self) -> Iterator[Event]:
        read_fd, write_fd = os.pipe()
        try:
            self.proc = subprocess.Popen(
                self.run.command(write_fd),
                cwd=self.run.cwd or None,
                env=self.run.environment(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
            )
        except OSError:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        if self._cancel.is_set():  # cancelled while starting
            self._signal(self.proc, signal.SIGINT)
        assert self.proc.stdout is not None
        reader = threading.Thread(
            target=self._read_output, args=(self.proc.stdout,), name="gpuviz-script-output"
        )
        reader.daemon = True
        reader.start()
        terminal: Event | None = None
        trace: str | None = None
        try:
            with os.fdopen(read_fd, "rb") as pipe:
                for raw in pipe:
                    try:
                        event = decode_event(raw)
                    except EventDecodeError:
                        continue  # a torn line; the terminal event decides
                    if isinstance(event, TraceReady):
                        trace = event.path
                    if isinstance(event, (Finished, Failed, Cancelled)):
                        terminal = event
                    yield event
            code = self.proc.wait()
        except GeneratorExit:
            self._kill_if_alive()
            self.proc.wait()
            raise
        finally:
            reader.join(timeout=5)
        if terminal is None:
            tail = "".join(self.output_tail)
            if self._cancel.is_set():
                yield Cancelled(trace)
            elif code < 0:
                yield Failed(f"the script's process died of {signal_name(-code)}", tail, trace)
            else:
                yield Failed(f"the script's process exited with status {code}", tail, trace)


@dataclass(frozen=True)
class InterpreterCheck:
    """What :func:`check_interpreter` found.

    ``ok`` is True when gpuviz and torch import; ``gpuviz``, ``torch``, ``python`` are their
    versions, ``cuda`` whether torch sees a GPU; ``error`` says why not otherwise.
    """

    ok: bool
    python: str = ""
    gpuviz: str = ""
    torch: str = ""
    cuda: bool = False
    error: str = ""


CHECK_CODE = (
    "import json, sys\n"
    "import gpuviz, torch, psutil\n"
    "print(json.dumps({'python': sys.version.split()[0], 'gpuviz': gpuviz.__version__, "
    "'torch': torch.__version__, 'cuda': bool(torch.cuda.is_available())}))\n"
)


def interpreter_check_command(python: str) -> tuple[list[str], dict[str, str]]:
    """The command (and environment) that checks ``python``; parse with :func:`parse_check`."""
    return [python, "-c", CHECK_CODE], child_environment(python)


def parse_check(returncode: int, output: str) -> InterpreterCheck:
    """The result of :func:`interpreter_check_command`'s run."""
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    if returncode == 0:
        for line in reversed(lines):  # warnings may follow the answer
            try:
                d = json.loads(line)
                return InterpreterCheck(
                    True, str(d["python"]), str(d["gpuviz"]), str(d["torch"]), bool(d["cuda"])
                )
            except (ValueError, KeyError, TypeError):
                continue
    last = lines[-1] if lines else f"exit status {returncode}"
    if "No module named" in last:
        last += " (install gpuviz and torch for this Python)"
    return InterpreterCheck(False, error=last)


def check_interpreter(python: str, timeout_s: float = 60.0) -> InterpreterCheck:
    """Whether ``python`` can run ``gpuviz profile`` (blocks: it imports torch there)."""
    if not python or not os.path.isfile(python) or not os.access(python, os.X_OK):
        return InterpreterCheck(False, error=f"{python}: not an executable file")
    cmd, env = interpreter_check_command(python)
    try:
        out = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return InterpreterCheck(False, error=str(exc))
    return parse_check(out.returncode, out.stdout + out.stderr)


__all__ = [
    "CANCEL_GRACE_S",
    "InterpreterCheck",
    "ScriptProcess",
    "ScriptRun",
    "check_interpreter",
    "child_environment",
    "interpreter_check_command",
    "parse_check",
]
