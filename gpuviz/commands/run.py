"""``gpuviz run NAME|FILE.py:FUNC``: run a workload under the profiler, headless (or ``--gui``).

Exit codes (DESIGN.md): 0 ok; 1 the workload failed (one line, then the partial trace's path);
2 bad workload, parameter, device or user file (one line naming it); 130 Ctrl-C (the partial
trace is kept and its path printed).

On a terminal it shows a progress bar with the live step times (rich, on stderr). ``--json``
prints the result object (``Finished.result``) on stdout; the workload's own prints are sent to
stderr so that stdout stays one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

from gpuviz.display import echo, json_text, terminal_safe
from gpuviz.errors import BadInputError, WorkFailedError


def _request(args: argparse.Namespace) -> Any:
    from gpuviz.engine.runner import RunRequest
    from gpuviz.workloads.params import parse_params
    from gpuviz.workloads.registry import resolve_workload

    spec = resolve_workload(args.workload)
    params = parse_params(spec.params, args.params, workload=spec.name)
    steps = spec.steps_for(params) if args.steps is None else args.steps
    if steps < 1:
        raise BadInputError(f"--steps {steps}: must be 1 or more")
    if args.rank_timeout is not None and args.rank_timeout <= 0:
        raise BadInputError(f"--rank-timeout {args.rank_timeout}: must be positive")
    if args.out and not spec.multi_process and not args.out.endswith((".json", ".json.gz")):
        raise BadInputError(f"--out {args.out}: a trace file must end in .json or .json.gz")
    _check_outputs(args, spec)
    return RunRequest(
        workload=args.workload,
        params=params,
        device=args.device,
        gpus=args.gpus,
        steps=steps,
        out=args.out,
        profile=not args.no_profile,
        rank_timeout_s=args.rank_timeout if args.rank_timeout is not None else 300.0,
        memory_snapshot=bool(getattr(args, "memory_snapshot", False)),
        snapshot_entries=_snapshot_entries(args),
    )


def _check_outputs(args: argparse.Namespace, spec: Any) -> None:
    """Refuse ``--out`` and ``--events`` places that cannot be written, before the workload
    runs (the trace is written only once its steps are done)."""
    from gpuviz.engine.request import default_trace_path
    from gpuviz.engine.writable import check_file_place, check_out_folder

    if not args.no_profile:
        out = Path(args.out) if args.out else default_trace_path(spec.name, spec.multi_process)
        check_out_folder(out, spec.multi_process, "--out" if args.out else "the trace")
    if args.events:
        check_file_place(Path(args.events), "--events", "a file (E.jsonl)")


def _snapshot_entries(args: argparse.Namespace) -> int:
    n = getattr(args, "snapshot_entries", None)
    if n is None:
        return 100_000
    if n < 1:
        raise BadInputError(f"--snapshot-entries {n}: must be 1 or more")
    return int(n)


def main(args: argparse.Namespace) -> int:
    """Run one workload; see the module docstring for output and exit codes."""
    if args.screenshot and not args.gui:
        raise BadInputError("--screenshot needs --gui")
    if args.gui:
        return _run_gui(args)
    request = _request(args)
    if args.isolate:
        from gpuviz.engine.child import ChildProcessRunner

        runner: Any = ChildProcessRunner(request)
    else:
        from gpuviz.engine.runner import Runner

        runner = Runner(request)
    return _drive(runner, args)


def _run_gui(args: argparse.Namespace) -> int:
    request = _request(args)  # bad input exits 2 here, before Qt starts
    try:
        from gpuviz.gui.run.launch import run_gui
    except ImportError:
        run_gui = None
    if run_gui is None:
        raise BadInputError("--gui: the app is not built yet")
    return int(
        run_gui(request, screenshot=args.screenshot, size=args.size, events=args.events) or 0
    )


class _Display:
    """The live view on a terminal: a rich progress bar and the latest step times (stderr)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None
        self._last: dict[str, str] = {}
        self._title = ""

    def __enter__(self) -> _Display:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[times]}"),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task("starting", total=None, times="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)
            self._progress = None

    def on_event(self, event: Any) -> None:
        if self._progress is None:
            return
        name = type(event).__name__
        if name == "Started":
            self._title = _markup_safe(f"{event.workload} on {event.device}")
            self._progress.update(self._task, description=f"{self._title}: set-up and warm-ups")
        elif name == "Progress":
            self._progress.update(
                self._task, total=event.total, completed=event.step, description=self._title
            )
        elif name == "StepTimed":
            t = event.gpu_ms if event.gpu_ms is not None else event.wall_ms
            self._last[event.label] = f"{_markup_safe(event.label)} {t:.3g} ms" + (
                " (profiled)" if event.profiled else ""
            )
            self._progress.update(self._task, times="  ".join(list(self._last.values())[-3:]))
        elif name == "TraceReady":
            # Not markup, not highlighted: the path is shown as it is (escapes made visible).
            self._progress.console.print(
                terminal_safe(f"trace: {event.path}"), markup=False, highlight=False
            )


def _markup_safe(text: str) -> str:
    """A name for a rich progress column: one safe line, its ``[...]`` not read as markup."""
    from rich.markup import escape

    return str(escape(terminal_safe(str(text), one_line=True)))


def _drive(runner: Any, args: argparse.Namespace) -> int:
    from gpuviz.engine.events import Cancelled, Failed, Finished, TraceReady
    from gpuviz.engine.writable import open_event_writer

    writer = open_event_writer(args.events) if args.events else None
    interrupted = False
    terminal: Any = None
    trace: str | None = None
    display = _Display(sys.stderr.isatty())

    def handle(event: Any) -> None:
        nonlocal terminal, trace
        if isinstance(event, Finished) and interrupted:
            # Ctrl-C came before the run's last event: it ends as cancelled, whatever the
            # runner saw in time (a child may have finished its last step meanwhile).
            event = Cancelled(trace)
        if writer is not None:
            writer.write(event)
        display.on_event(event)
        if isinstance(event, TraceReady):
            trace = event.path
        if isinstance(event, (Finished, Failed, Cancelled)):
            terminal = event

    # Ctrl-C cancels the run; only inside the workload's own code does it raise there (see
    # InProcessRun.interrupt). A KeyboardInterrupt raised wherever the signal lands could be
    # dropped by Python in a finalizer, and the run would then end with exit code 0.
    stop = getattr(runner, "interrupt", None) or runner.cancel

    def on_sigint(signum: int, frame: Any) -> None:
        nonlocal interrupted
        if terminal is None:
            interrupted = True
            stop()

    previous = signal.signal(signal.SIGINT, on_sigint) or signal.default_int_handler
    events = iter(runner)
    try:
        with display, contextlib.redirect_stdout(sys.stderr):
            while True:
                try:
                    for event in events:
                        handle(event)
                    break
                except KeyboardInterrupt:
                    # Raised in a step of a runner without interrupt(): stop at the step
                    # boundary (or inside the step) and keep the trace.
                    interrupted = True
                    runner.cancel()
    finally:
        signal.signal(signal.SIGINT, previous)
        if writer is not None:
            writer.close()
    if isinstance(terminal, Finished):
        _print_result(terminal.result, args.json)
        if terminal.result.get("trace"):
            from gpuviz.commands.advise import print_top_findings

            try:
                print_top_findings(terminal.result["trace"], file=sys.stderr if args.json else None)
            except KeyboardInterrupt:  # the run has finished: Ctrl-C only skips the advice
                echo("gpuviz run: findings skipped", file=sys.stderr)
        return 0
    if isinstance(terminal, Cancelled) or interrupted:
        partial = getattr(terminal, "partial_trace_path", None) or trace
        msg = "gpuviz run: cancelled"
        msg += f"; partial trace kept: {partial}" if partial else " (no trace was recorded yet)"
        echo(msg, file=sys.stderr)
        return 130
    if isinstance(terminal, Failed):
        partial = terminal.partial_trace_path
        tail = f"\npartial trace: {partial}" if partial else "\nno trace was recorded"
        tail += _snapshot_note(partial or trace or getattr(runner, "trace_path", None))
        if terminal.traceback and not args.json:
            echo(terminal.traceback.rstrip(), file=sys.stderr)
        raise WorkFailedError(f"{terminal.error}{tail}")
    raise WorkFailedError("the run ended without a result")


def _one(value: object) -> str:
    """A value of the result (a name from a user's file or a replayed stream) on one line."""
    return terminal_safe(str(value), one_line=True)


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        echo(json_text(result, indent=1, default=str))
        return
    echo(
        f"{_one(result['workload'])} on {_one(result['device'])}  "
        f"(torch {_one(result['torch_version'])})"
    )
    rows = result.get("strategies", [])
    for r in rows:
        name = _one(r["name"])
        if r["status"] != "ok":
            why = _one(r.get("reason") or "")
            err = r.get("error")
            echo(f"  {name:<24} {_one(r['status'])}: " + (f"{_one(err)}. " if err else "") + why)
            continue
        t = r.get("median_gpu_ms", r.get("median_wall_ms"))
        parts = [f"{t:10.4f} ms" if t is not None else " " * 13]
        if "speedup" in r:
            parts.append(f"{r['speedup']:9.1f}x")
        if "launches" in r:
            parts.append(f"{r['launches']:>7} launches")
        if r.get("idle_share") is not None:
            parts.append(f"idle {100 * r['idle_share']:5.1f}%")
        if "gb_per_s" in r:
            parts.append(f"{r['gb_per_s']:8.2f} GB/s")
        if "items_per_s" in r:
            parts.append(f"{r['items_per_s']:10.1f}/s")
        echo(f"  {name:<24} " + "  ".join(parts))
    mem = result.get("memory", {})
    if mem:
        echo(f"  peak RSS {mem.get('peak_rss_bytes', 0) / 2**20:.0f} MiB", end="")
        for dev, m in mem.get("devices", {}).items():
            echo(
                f"; {_one(dev)} peak allocated {m.get('peak_allocated_bytes', 0) / 2**20:.1f} MiB",
                end="",
            )
        echo()
    echo(f"trace: {result.get('trace') or '(none: --no-profile)'}")
    if result.get("memory_snapshot"):
        echo(
            f"memory snapshot: {result['memory_snapshot']}  (gpuviz memory, or open it with the trace)"
        )
    for w in result.get("warnings", []):
        if str(w).startswith("--memory-snapshot"):
            echo(f"note: {w}")


def _snapshot_note(trace: str | Path | None) -> str:
    """Where the allocator snapshot taken at the failure is, when one was written."""
    if not trace:
        return ""
    from gpuviz.engine.memory_history import snapshot_path_for

    snap = snapshot_path_for(trace)
    return f"\nmemory snapshot at the failure: {snap}" if snap.exists() else ""
