"""The ``gpuviz`` command line (DESIGN.md, "CLI contract").

Nothing heavy is imported here: each command's module (``gpuviz.commands.<name>``) is imported
only when that command runs, so ``gpuviz split`` never loads numpy's friends, torch or Qt.

Exit codes: 0 ok; 1 the work failed; 2 bad usage, parameter or input file (one line on stderr,
never a traceback); 130 cancelled with Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from gpuviz.display import echo, terminal_safe
from gpuviz.errors import BadInputError, WorkFailedError
from gpuviz.gui.view_names import VIEWS

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


TRACE_SUFFIXES = (".json", ".json.gz", ".pickle", ".pickle.gz")
"""What ``gpuviz PATH`` takes for a path to open even when it does not exist (to say so)."""

MAX_SIDE = 16384
MAX_PIXELS = 16384 * 4096
"""``--size`` limits: Qt's own limit on a side, and 64 Mpx (a 256 MiB ARGB image; the window
and its grab take a few of those). 100000x100000 grew past 15 GB before it failed."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line and exit code 2.

    ``prog`` is the whole command as typed (``gpuviz``, ``gpuviz run``): argparse builds a
    subcommand's from its parent's, so the line names the command and its own help.
    """

    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> None:  # type: ignore[override]
        # The message may quote an argument: a file name with control characters in it.
        text = terminal_safe(f"{self.prog}: {message} (see {self.prog} --help)")
        self.exit(EXIT_USAGE, text + "\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """Parse like argparse, but blame an unknown option on the command it was given to."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = getattr(parsed, "command", None)
            owner = getattr(self, "commands", {}).get(command, self)
            owner.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size {text!r}: expected WxH, e.g. 1600x900") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"--size {text!r}: width and height must be positive")
    if w > MAX_SIDE or h > MAX_SIDE or w * h > MAX_PIXELS:
        raise argparse.ArgumentTypeError(
            f"--size {text!r}: at most {MAX_SIDE} pixels a side and "
            f"{MAX_PIXELS // 2**20} Mpx in all (e.g. 8192x8192)"
        )
    return w, h


def _peak(option: str) -> Any:
    def parse(text: str) -> float:
        # the command module holds the rule (and the bounds); it imports nothing heavy
        from gpuviz.commands.peak_options import parse_peak

        try:
            return parse_peak(option, text)
        except ValueError as exc:  # argparse names the option itself
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option} ")) from None

    return parse


def add_peak_options(p: argparse.ArgumentParser) -> None:
    """``--peak-tflops X --peak-bandwidth Y``: the device's peaks, over gpuviz's table."""
    p.add_argument(
        "--peak-tflops",
        type=_peak("--peak-tflops"),
        metavar="X",
        help="dense peak TFLOP/s to measure MFU and rooflines against (every precision), "
        "instead of the table's for the trace's GPU (0.001 to 100000)",
    )
    p.add_argument(
        "--peak-bandwidth",
        type=_peak("--peak-bandwidth"),
        metavar="Y",
        help="peak memory bandwidth in TB/s, instead of the table's (0.001 to 1000)",
    )


def add_no_cache(p: argparse.ArgumentParser) -> None:
    """``--no-cache`` for a command that loads traces (``main`` turns it into the env var)."""
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="import the trace files again, without the import cache (GPUVIZ_NO_CACHE=1)",
    )


def _max_memory(text: str) -> str:
    from gpuviz.trace.memory_budget import parse_size  # only when the option is given

    try:
        parse_size(text)
    except BadInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


def add_max_memory(p: argparse.ArgumentParser) -> None:
    """``--max-memory`` for a command that loads traces (``main`` turns it into the env var)."""
    p.add_argument(
        "--max-memory",
        type=_max_memory,
        default=None,
        metavar="SIZE",
        help="memory the import may take, e.g. 8G (GPUVIZ_MAX_MEMORY; default: half the RAM); "
        "a trace that would take more is read without the args text of its CPU ops, then "
        "without its python_function slices, and the command says so",
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for every command, with the flags of DESIGN.md's CLI contract.

    With ``command`` (one of :data:`COMMANDS`), only that command's parser: the others'
    options are not built (argparse took 7-11 ms for all thirteen, a tenth of a ``gpuviz
    summary`` that prints a kept output; issue 25). ``parser.commands`` maps the commands
    built to their parsers.
    """
    p = _Parser(prog="gpuviz", description="See how PyTorch work runs on GPUs.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, add in COMMANDS.items():
        if command is None or name == command:
            add(sub)
    p.commands = dict(sub.choices)
    return p


def _add_open(sub: Any) -> None:
    o = sub.add_parser("open", help="open traces in the app (each in its own tab)")
    o.add_argument(
        "traces", nargs="+", metavar="TRACE", help="a trace file or a folder of per-rank files"
    )
    o.add_argument("--view", choices=VIEWS, default="insights")
    o.add_argument("--screenshot", metavar="OUT.png", help="render offscreen, save, exit")
    o.add_argument(
        "--size",
        type=_size,
        default=None,
        metavar="WxH",
        help="the window's size (default: fitted to the screen, as last closed; 1600x900 "
        "with --screenshot)",
    )
    add_no_cache(o)
    add_max_memory(o)


def _add_workloads(sub: Any) -> None:
    w = sub.add_parser("workloads", help="list workloads and their parameters")
    w.add_argument("--json", action="store_true")


def _add_run(sub: Any) -> None:
    r = sub.add_parser("run", help="run a workload under the profiler (headless, or --gui)")
    r.add_argument("workload", metavar="NAME|FILE.py:FUNC")
    r.add_argument("-p", dest="params", action="append", default=[], metavar="k=v")
    r.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda if present)")
    r.add_argument(
        "--gpus", default=None, metavar="N|LIST", help="GPU count or list, e.g. 2 or 0,2,3"
    )
    r.add_argument("--steps", type=int, default=None, help="steps per strategy (default 5)")
    r.add_argument("--out", default=None, metavar="T.json.gz|DIR")
    r.add_argument(
        "--events", default=None, metavar="E.jsonl", help="write the event stream as JSON lines"
    )
    r.add_argument(
        "--isolate",
        action="store_true",
        help="run in a child process: a workload that calls os._exit() or crashes then ends "
        "that child, not gpuviz (without it, it ends gpuviz with no word and no trace)",
    )
    r.add_argument("--rank-timeout", type=float, default=300.0, metavar="S")
    r.add_argument("--no-profile", action="store_true", help="time only; record no trace")
    r.add_argument(
        "--memory-snapshot",
        action="store_true",
        help="record CUDA allocator history over the profiled steps: NAME.memory.pickle beside "
        "the trace (written at out of memory too)",
    )
    r.add_argument(
        "--snapshot-entries",
        type=int,
        default=None,
        metavar="N",
        help="allocator history ring buffer (default 100000)",
    )
    r.add_argument("--json", action="store_true", help="print one result object")
    r.add_argument("--gui", action="store_true", help="run inside the app")
    r.add_argument("--screenshot", metavar="OUT.png")
    r.add_argument(
        "--size",
        type=_size,
        default=None,
        metavar="WxH",
        help="the window's size (default: fitted to the screen; 1600x900 with --screenshot)",
    )


def _add_summary(sub: Any) -> None:
    s = sub.add_parser("summary", help="figures of one trace (all its ranks)")
    s.add_argument("trace", metavar="TRACE")
    s.add_argument("--json", action="store_true")
    add_peak_options(s)
    add_no_cache(s)
    add_max_memory(s)


def _add_split(sub: Any) -> None:
    sp = sub.add_parser("split", help="DataParallel's per-GPU rows for a batch")
    sp.add_argument("--batch", type=int, required=True, help="rows in the batch (dim 0)")
    sp.add_argument(
        "--gpus", type=int, required=True, help="devices DataParallel scatters over (1 to 120)"
    )
    sp.add_argument("--json", action="store_true")


def _add_memory(sub: Any) -> None:
    m = sub.add_parser(
        "memory", help="a CUDA allocator snapshot's figures, sites and OOM (runs nothing in it)"
    )
    m.add_argument(
        "snapshot",
        metavar="SNAP.pickle",
        help="torch.cuda.memory._dump_snapshot output, or a folder of rank-N.memory.pickle "
        "files (one table of the ranks)",
    )
    m.add_argument("--json", action="store_true")
    m.add_argument("--top", type=int, default=10, metavar="N", help="sites to list (default 10)")


def _add_advise(sub: Any) -> None:
    ad = sub.add_parser(
        "advise", help="why a trace is slow: step breakdown and findings ranked by saving"
    )
    ad.add_argument("trace", metavar="TRACE")
    ad.add_argument("--against", metavar="TRACE2", help="compare with another trace")
    ad.add_argument("--json", action="store_true")
    add_no_cache(ad)
    add_max_memory(ad)


def _add_breakdown(sub: Any) -> None:
    b = sub.add_parser(
        "breakdown",
        help="where the time went: by op, op and shape, module, source line, kernel or step",
    )
    b.add_argument("trace", metavar="TRACE")
    b.add_argument(
        "--by",
        choices=("op", "op-shape", "module", "line", "kernel", "step"),
        default="op",
        help="what the rows are (default op; module and line need a trace with Python stacks)",
    )
    b.add_argument(
        "--mine",
        action="store_true",
        help="--by line: the innermost line in your own files (not torch, the standard "
        "library or installed packages)",
    )
    b.add_argument("--json", action="store_true")
    b.add_argument(
        "--top", type=int, default=20, metavar="N", help="rows to print (default 20; 0: all)"
    )
    add_peak_options(b)
    add_no_cache(b)
    add_max_memory(b)


def _add_export(sub: Any) -> None:
    e = sub.add_parser(
        "export", help="write a normalized Chrome trace (Perfetto) or per-rank files (HTA)"
    )
    e.add_argument("trace", metavar="TRACE")
    g = e.add_mutually_exclusive_group(required=True)
    g.add_argument("-o", dest="output", metavar="OUT.json[.gz]")
    g.add_argument("--per-rank", metavar="DIR")
    add_no_cache(e)
    add_max_memory(e)


def _percent(text: str) -> float:
    # The parser's type for check's limits; the command module holds the rule.
    from gpuviz.commands.check import percent

    return percent(text)


def _add_check(sub: Any) -> None:
    """``gpuviz check``: the CI gate."""
    c = sub.add_parser(
        "check",
        help="CI gate: exit 1 when NEW regressed against BASELINE (step time, memory, findings)",
        description=(
            "Compare NEW with BASELINE (two runs of one job): a verdict on what changed (the "
            "GPU work kernel for kernel, the host time, syncs, copies, op calls per step), "
            "then step time, peak memory, MFU and findings against the limits."
        ),
        epilog=(
            "exit status:\n"
            "  0  within the limits\n"
            "  1  a regression: NEW exceeds a limit\n"
            "  2  bad input: a file or folder that cannot be read, a folder whose files are\n"
            "     not one job, a trace without steps, a bad option (one line on stderr)\n"
            '  3  internal failure: gpuviz itself failed ("internal error: ..." on stderr; the\n'
            "     traceback with --debug or GPUVIZ_DEBUG=1); never read it as a regression"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("new", metavar="NEW", help="the new run's trace (file or rank folder)")
    c.add_argument("--against", required=True, metavar="BASELINE", help="the baseline run's trace")
    c.add_argument(
        "--max-step-regression",
        type=_percent,
        default=0.05,
        metavar="PCT",
        help="allowed growth of the mean step, in percent: 5%% or 5 (default 5%%; a bare "
        "number below 1 must carry %%: 0.5%%)",
    )
    c.add_argument(
        "--max-memory-regression",
        type=_percent,
        default=0.10,
        metavar="PCT",
        help="allowed growth of the peak GPU memory, when both runs recorded it, in percent "
        "(default 10%%)",
    )
    c.add_argument(
        "--fail-on",
        choices=("critical", "warning"),
        default="critical",
        help="fail on new findings at this level or above (default critical)",
    )
    c.add_argument("--json", action="store_true")
    c.add_argument(
        "--debug",
        action="store_true",
        help="on an internal failure (exit 3), print its traceback (also GPUVIZ_DEBUG=1)",
    )
    add_no_cache(c)
    add_max_memory(c)


def _add_mcp(sub: Any) -> None:
    """``gpuviz mcp``: the coding agents' server."""
    m = sub.add_parser(
        "mcp", help="serve gpuviz's analyses to coding agents (an MCP server on stdio)"
    )
    m.add_argument(
        "--root",
        dest="roots",
        action="append",
        default=[],
        metavar="DIR",
        help="serve files under DIR only (repeatable; default: the current folder)",
    )
    m.add_argument(
        "--allow-run",
        action="store_true",
        help="let the profile tool run scripts under the roots (off by default)",
    )


PROFILE_USAGE = (
    "gpuviz profile [OPTIONS] SCRIPT.py [ARGS...]\n"
    "       gpuviz profile [OPTIONS] -m MODULE [ARGS...]\n"
    "       torchrun ... -m gpuviz profile [OPTIONS] --out DIR SCRIPT.py [ARGS...]"
)


def _add_profile(sub: Any) -> None:
    # allow_abbrev=False: the split of gpuviz's options from the script's needs exact names.
    pr = sub.add_parser(
        "profile",
        help="profile your own script, unmodified (steps end at optimizer.step())",
        usage=PROFILE_USAGE,
        allow_abbrev=False,
        description=(
            "Run a script (or -m MODULE) under the profiler, as `python SCRIPT.py ARGS` would. "
            "Options before SCRIPT belong to gpuviz, everything after it to the script. Steps "
            "end at each optimizer.step(), at each return of --step-fn, or at gpuviz.step(). "
            "The exit status is the script's."
        ),
    )
    pr.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    sched = pr.add_argument_group("steps (torch.profiler.schedule)")
    sched.add_argument(
        "--skip", type=int, default=5, metavar="N", help="steps left alone first (5)"
    )
    sched.add_argument("--warmup", type=int, default=2, metavar="N", help="warm-up steps (2)")
    sched.add_argument("--active", type=int, default=5, metavar="N", help="recorded steps (5)")
    sched.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="windows (1; 0: until the script ends)"
    )
    sched.add_argument(
        "--stop", action="store_true", help="end the script after the last window (trace written)"
    )
    sched.add_argument(
        "--step-fn",
        metavar="MOD:QUAL",
        help="each return of this function ends a step (e.g. __main__:generate, model:GPT.forward)",
    )
    sched.add_argument(
        "--duration",
        type=float,
        default=10.0,
        metavar="S",
        help="with no step at all, the first S seconds are recorded as one range (10)",
    )
    rec = pr.add_argument_group("recording")
    rec.add_argument("--record-shapes", action="store_true", help="record input shapes")
    rec.add_argument(
        "--stack",
        action="store_true",
        help="record Python stacks in the no-step range too (the profiled windows have them)",
    )
    rec.add_argument(
        "--no-stack",
        action="store_true",
        help="no Python stacks (the Modules and Source views and breakdown --by module/line need them)",
    )
    rec.add_argument("--memory", action="store_true", help="record allocations (profile_memory)")
    rec.add_argument(
        "--memory-snapshot",
        action="store_true",
        help="record the CUDA allocator's history: NAME.memory.pickle beside the trace",
    )
    rec.add_argument(
        "--snapshot-entries", type=int, default=100_000, metavar="N", help="its ring buffer size"
    )
    out = pr.add_argument_group("output")
    out.add_argument(
        "--out",
        metavar="T.json.gz|DIR",
        help="trace file (default ./gpuviz-runs/SCRIPT-STAMP.json.gz); a folder under torchrun",
    )
    out.add_argument("--events", metavar="E.jsonl", help="write the event stream as JSON lines")
    out.add_argument("--events-fd", type=int, help=argparse.SUPPRESS)
    out.add_argument(
        "--json", action="store_true", help="print the result object as the last line of stdout"
    )
    pr.add_argument(
        "--nproc-per-node",
        type=int,
        metavar="N",
        help="start N processes with torch.distributed.run (one trace per rank in --out DIR)",
    )


COMMANDS: dict[str, Callable[[Any], None]] = {
    "open": _add_open,
    "workloads": _add_workloads,
    "run": _add_run,
    "summary": _add_summary,
    "split": _add_split,
    "memory": _add_memory,
    "advise": _add_advise,
    "breakdown": _add_breakdown,
    "export": _add_export,
    "profile": _add_profile,
    "check": _add_check,
    "mcp": _add_mcp,
}
"""Each command's name and the function that adds its parser, in ``gpuviz --help``'s order."""


def split_profile_argv(argv: list[str], at: int) -> tuple[list[str], dict[str, Any]]:
    """Split ``gpuviz … profile OPTIONS SCRIPT ARGS`` into gpuviz's part and the script's.

    Options before the script (or ``-m MODULE``, or after ``--``) are gpuviz's; the first other
    word is the script, and everything after it is the script's own, as with ``python``.
    Returns the argv to parse and ``{"script", "module", "script_args"}``.
    """
    with_value = _profile_value_options()
    head = argv[: at + 1]
    target: dict[str, Any] = {"script": None, "module": None, "script_args": []}
    j = at + 1
    while j < len(argv):
        word = argv[j]
        if word == "--":
            if j + 1 < len(argv):
                target["script"], target["script_args"] = argv[j + 1], argv[j + 2 :]
            break
        if word == "-m" or (word.startswith("-m") and not word.startswith("--")):
            module = word[2:] or (argv[j + 1] if j + 1 < len(argv) else None)
            rest = argv[j + 1 :] if word[2:] else argv[j + 2 :]
            target["module"], target["script_args"] = module, rest
            break
        if word.startswith("-") and word != "-":
            head.append(word)
            if word in with_value and j + 1 < len(argv):
                head.append(argv[j + 1])
                j += 1
            j += 1
            continue
        target["script"], target["script_args"] = word, argv[j + 1 :]
        break
    return head, target


def _profile_value_options() -> set[str]:
    p = build_parser("profile")
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    prof = sub.choices["profile"]
    return {o for a in prof._actions if a.nargs != 0 for o in a.option_strings}


def open_path_argv(argv: Sequence[str], commands: Collection[str]) -> list[str]:
    """``gpuviz PATH ...`` as ``gpuviz open PATH ...``: what a user types, or a file manager runs.

    The first word that is not an option is taken for a TRACE (or snapshot) when it is not a
    command and is an existing file or folder, or is named like one (``.json``,
    ``.json.gz``, ``.pickle``, ``.pickle.gz``), so that a mistyped name gets ``gpuviz open``'s
    "no such file" rather than "invalid choice". A ``.py`` word is refused with how to profile
    it (:class:`BadInputError`). Any other word is left to argparse.

    Parameters
    ----------
    argv : sequence of str
        The arguments after ``gpuviz``.
    commands : collection of str
        The command names; a word that is one is never a path.
    """
    words = list(argv)
    at = _command_index(words)
    if at is None or words[at] in commands:
        return words
    word = words[at]
    if word.lower().endswith(".py"):
        # A script is run, not opened: say how, rather than "not JSON" for its source.
        raise BadInputError(f"{word}: a Python script; to profile it: gpuviz profile {word}")
    if os.path.exists(word) or word.lower().endswith(TRACE_SUFFIXES):
        words.insert(at, "open")
    return words


def _command_index(argv: Sequence[str]) -> int | None:
    for i, word in enumerate(argv):
        if not word.startswith("-"):
            return i
    return None


def _version() -> str:
    from gpuviz import __version__

    return f"gpuviz {__version__}"


def _safe_excepthook(exc_type: Any, exc: Any, tb: Any) -> None:
    """Print an uncaught exception's traceback with control characters escaped.

    A bug's message may quote a name from a file; Qt's slots report theirs through this hook
    too, so an exception raised while drawing a crafted trace cannot write escapes either.
    """
    import traceback

    echo("".join(traceback.format_exception(exc_type, exc, tb)), file=sys.stderr, end="")


def _safe_thread_excepthook(args: Any) -> None:
    if args.exc_type is not SystemExit:
        _safe_excepthook(args.exc_type, args.exc_value, args.exc_traceback)


def install_safe_excepthooks() -> None:
    """Route uncaught exceptions (main thread and other threads) through :func:`echo`.

    Hooks that someone else installed (a debugger, pytest) are left in place.
    """
    import threading

    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _safe_excepthook
    if threading.excepthook is threading.__excepthook__:
        threading.excepthook = _safe_thread_excepthook


@contextmanager
def _env_switch(name: str, value: str | None) -> Iterator[None]:
    """``name=value`` in the environment while the command runs (``--max-memory``); nothing
    when ``value`` is None. Restored after, for in-process callers."""
    if value is None:
        yield
        return
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


TRACE_READERS = frozenset({"summary", "advise", "breakdown", "check", "export", "memory", "split"})
"""The commands that only read files: no script of the user's runs in their process."""


def blas_threads(command: str) -> str | None:
    """``"1"``: the OpenBLAS threads for a command that reads files, unless already chosen.

    numpy's import starts OpenBLAS's threads, one a core, and they spin a while: on a 16-core
    host that was 2.2 s of CPU in a 0.3 s import (0.3 s with one thread), beside the import
    children that decode the trace. These commands make no matrix products. None (no change)
    for the others: ``profile`` and ``run`` run the user's code, the app starts them, and a
    setting the user made stays.
    """
    if command not in TRACE_READERS or "numpy" in sys.modules:
        return None
    if os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS"):
        return None
    return "1"


@contextmanager
def _cache_switch(off: bool) -> Iterator[None]:
    """With ``--no-cache``, GPUVIZ_NO_CACHE=1 while the command runs.

    One switch for every loader in the process (and its children): each command and the app's
    load worker call ``load_trace``, which reads it. Restored after, for in-process callers.
    """
    if not off:
        yield
        return
    before = os.environ.get("GPUVIZ_NO_CACHE")
    os.environ["GPUVIZ_NO_CACHE"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("GPUVIZ_NO_CACHE", None)
        else:
            os.environ["GPUVIZ_NO_CACHE"] = before


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    try:
        words = open_path_argv(sys.argv[1:] if argv is None else argv, COMMANDS)
    except BadInputError as exc:
        echo(f"gpuviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    at = _command_index(words)
    # A command named first: its parser alone. Anything else (gpuviz --help, a mistyped
    # command) gets every command's, for the list or the "invalid choice".
    parser = build_parser(words[0] if at == 0 and words[0] in COMMANDS else None)
    target = None
    if at is not None and words[at] == "profile":
        words, target = split_profile_argv(words, at)
    if target is None:
        args = parser.parse_args(words)
    else:
        args, unknown = parser.parse_known_args(words)
        if unknown:
            parser.exit(
                EXIT_USAGE,
                terminal_safe(
                    f"gpuviz profile: unrecognized arguments: {' '.join(unknown)} (gpuviz's "
                    "options come before SCRIPT.py, the script's after it; see gpuviz profile "
                    "--help)"
                )
                + "\n",
            )
        if target["script"] is None and target["module"] is None:
            parser.exit(
                EXIT_USAGE,
                "gpuviz profile: name a script (SCRIPT.py) or a module (-m MODULE) "
                "(see gpuviz profile --help)\n",
            )
        args.script, args.module = target["script"], target["module"]
        args.script_args = target["script_args"]
    command = args.command or "app"
    install_safe_excepthooks()
    try:
        module = importlib.import_module(f"gpuviz.commands.{command}")
        with (
            _cache_switch(getattr(args, "no_cache", False)),
            _env_switch("GPUVIZ_MAX_MEMORY", getattr(args, "max_memory", None)),
            _env_switch("OPENBLAS_NUM_THREADS", blas_threads(command)),
        ):
            return int(module.main(args) or 0)
    except BadInputError as exc:
        echo(f"gpuviz {command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except WorkFailedError as exc:
        echo(f"gpuviz {command}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        echo(f"gpuviz {command}: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
    except BrokenPipeError:
        return EXIT_OK


def entry() -> None:
    """The ``gpuviz`` console script and ``python -m gpuviz``: :func:`main`, then exit.

    A command that only reads files (:data:`TRACE_READERS`) leaves at once once its output is
    flushed (``os._exit``), without the interpreter's finalization: unloading numpy and the
    rest and freeing what the analysis left took 25-50 ms after a ``gpuviz summary`` had
    printed (a twentieth of its start-up, issue 25; measured on the 2-core VM and the 16-core
    H200). Nothing is left to do by then: these commands write their files in ``with``
    blocks, join their threads and import children, and register no ``atexit`` function.
    Every other command (the app, a profiled script, the agents' server) exits normally, as
    does any command whose output cannot be flushed (a closed pipe).
    """
    argv = sys.argv[1:]
    code = main(argv)
    if argv and argv[0] in TRACE_READERS:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        else:
            os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
