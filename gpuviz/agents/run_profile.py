"""``gpuviz profile`` of a script, in a child process with a time limit (the ``profile`` tool).

The server never imports torch: the script runs in ``python -m gpuviz profile --json --stop``,
a child process in its own process group, from the root that holds the script, and writes its
trace to ``ROOT/gpuviz-runs/`` (resolved first: a ``gpuviz-runs`` that links out of the root is
refused). Past the time limit the whole group is stopped (SIGTERM, then
SIGKILL). Only the options that shape what is recorded pass; those that choose where files go
or start more processes are gpuviz's to set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuviz.errors import BadInputError

VALUE_OPTIONS = (
    "--skip",
    "--warmup",
    "--active",
    "--repeat",
    "--step-fn",
    "--duration",
    "--snapshot-entries",
)
FLAG_OPTIONS = ("--record-shapes", "--stack", "--memory", "--memory-snapshot", "--stop")
MAX_TIMEOUT_S = 3600.0
OUT_FOLDER = "gpuviz-runs"
"""The folder under the root where the traces go."""
STDERR_LINES = 15


@dataclass
class ProfileRun:
    """What a profile child left.

    Attributes
    ----------
    exit_code : int or None
        The script's exit status (None when it was stopped at the time limit).
    timed_out : bool
    trace : Path or None
        The trace it wrote (a file, or a folder under torchrun), when there is one.
    result : dict
        ``gpuviz profile --json``'s result object ({} when none was printed).
    stderr_tail : list of str
        The last lines of its stderr (the script's and gpuviz's), for a failure.
    """

    exit_code: int | None
    timed_out: bool
    trace: Path | None
    result: dict[str, Any] = field(default_factory=dict)
    stderr_tail: list[str] = field(default_factory=list)


def check_options(options: list[str]) -> list[str]:
    """``options`` when each is one that :data:`VALUE_OPTIONS` or :data:`FLAG_OPTIONS` allows.

    Raises
    ------
    BadInputError
        Another option (``--out``, ``--events``, ``--nproc-per-node``…), or a value missing.
    """
    out: list[str] = []
    i = 0
    while i < len(options):
        word = options[i]
        key = word.split("=", 1)[0]
        if key in FLAG_OPTIONS and "=" not in word:
            out.append(word)
        elif key in VALUE_OPTIONS:
            if "=" in word:
                out.append(word)
            elif i + 1 < len(options):
                out += [word, options[i + 1]]
                i += 1
            else:
                raise BadInputError(f"option {word} needs a value.")
        else:
            allowed = ", ".join((*VALUE_OPTIONS, *FLAG_OPTIONS))
            raise BadInputError(f"option {word!r} is not allowed here; allowed: {allowed}.")
        i += 1
    return out


def _env() -> dict[str, str]:
    # The child must import this gpuviz whatever its working folder is.
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def run_profile(
    script: Path,
    args: list[str],
    options: list[str],
    root: Path,
    timeout_s: float,
) -> ProfileRun:
    """Profile ``script`` with ``args`` (see the module docstring).

    Parameters
    ----------
    script : Path
        The script, already checked to lie under ``root``.
    args : list of str
        The script's own arguments.
    options : list of str
        ``gpuviz profile`` options, checked by :func:`check_options`.
    root : Path
        The root that holds the script: the child's working folder; the trace goes to
        ``root/gpuviz-runs``.
    timeout_s : float
        Seconds before the child is stopped.
    """
    options = check_options(options)
    if not timeout_s > 0:
        raise BadInputError(f"timeout_s {timeout_s}: must be more than 0.")
    timeout_s = min(float(timeout_s), MAX_TIMEOUT_S)
    from gpuviz.agents.confine import folder_inside

    out_dir = folder_inside(root, OUT_FOLDER)  # a link out of the root is refused, not followed
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = out_dir / f"mcp-{script.stem}-{stamp}-{os.getpid()}-{time.monotonic_ns() % 10**6}.json.gz"
    stop = [] if "--stop" in options else ["--stop"]
    cmd = [
        sys.executable, "-m", "gpuviz", "profile", "--json", *stop, "--out", str(out),
        *options, str(script), *args,
    ]  # fmt: skip
    child = subprocess.Popen(
        cmd,
        cwd=root,
        env=_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,  # its own group: the limit stops the script's children too
    )
    timed_out = False
    try:
        stdout, stderr = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _stop_group(child)
        stdout, stderr = child.communicate()
    result = _last_json(stdout)
    trace = Path(result["trace"]) if result.get("trace") else None
    if trace is not None and not trace.is_absolute():
        trace = root / trace
    if trace is None and out.exists():  # a failed or stopped run may still have written it
        trace = out
    if trace is not None and not trace.resolve().is_relative_to(out_dir):
        trace = None  # only what it wrote in the output folder is read (and answered about)
    return ProfileRun(
        exit_code=None if timed_out else child.returncode,
        timed_out=timed_out,
        trace=trace if trace is not None and trace.exists() else None,
        result=result,
        stderr_tail=stderr.splitlines()[-STDERR_LINES:],
    )


def _stop_group(child: subprocess.Popen[str]) -> None:
    for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_json(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}
