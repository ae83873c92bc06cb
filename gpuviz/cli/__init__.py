"""The ``gpuviz`` command line (DESIGN.md, "CLI contract").

Nothing heavy is imported here: each command's module (``gpuviz.commands.<name>``) is imported
only when that command runs, so ``gpuviz split`` never loads numpy's friends, torch or Qt.

Each command group's parser is in its own module: :mod:`gpuviz.cli.traces` (the commands that
read traces), :mod:`gpuviz.cli.runs` (workloads, run, profile), :mod:`gpuviz.cli.app` (open,
mcp); options they share are :mod:`gpuviz.cli.options`'s. This module builds the parser and
runs a command (:func:`main`).

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

from gpuviz.cli import app, runs, traces
from gpuviz.display import echo, terminal_safe
from gpuviz.errors import BadInputError, WorkFailedError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
EXIT_CHECK_INTERNAL = 3  # gpuviz check's internal failure (gpuviz.commands.check.EXIT_INTERNAL)


TRACE_SUFFIXES = (".json", ".json.gz", ".pickle", ".pickle.gz")
"""What ``gpuviz PATH`` takes for a path to open even when it does not exist (to say so)."""


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


COMMANDS: dict[str, Callable[[Any], None]] = {
    "open": app.add_open,
    "workloads": runs.add_workloads,
    "run": runs.add_run,
    "summary": traces.add_summary,
    "split": traces.add_split,
    "memory": traces.add_memory,
    "advise": traces.add_advise,
    "breakdown": traces.add_breakdown,
    "export": traces.add_export,
    "profile": runs.add_profile,
    "check": traces.add_check,
    "critical-path": traces.add_critical_path,
    "whatif": traces.add_whatif,
    "mcp": app.add_mcp,
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


TRACE_READERS = frozenset(
    {"summary", "advise", "breakdown", "check", "export", "memory", "split"}
    | {"critical-path", "whatif"}
)
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
def _cluster_switch(args: argparse.Namespace) -> Iterator[None]:
    """With ``--cluster ADDRESS`` (or ``GPUVIZ_CLUSTER``, for the commands that take the
    option), the command's rank-folder work goes to that Dask cluster while it runs
    (:func:`gpuviz.trace.cluster.using`); closed after, and a LocalCluster it started stopped."""
    if not hasattr(args, "cluster"):
        yield
        return
    from gpuviz.trace import cluster  # light: Dask itself only when an address is given

    # A LocalCluster's workers fork from this small process (the import's children do too).
    with cluster.using(cluster.address_of(args.cluster), fork=True):
        yield


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
        module = importlib.import_module(f"gpuviz.commands.{command.replace('-', '_')}")
        with (
            _cache_switch(getattr(args, "no_cache", False)),
            _env_switch("GPUVIZ_MAX_MEMORY", getattr(args, "max_memory", None)),
            _env_switch("OPENBLAS_NUM_THREADS", blas_threads(command)),
            _env_switch("GPUVIZ_CACHE_DIR", getattr(args, "cache_dir", None)),
            _cluster_switch(args),
        ):
            return int(module.main(args) or 0)
    except BadInputError as exc:
        echo(f"gpuviz {command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except WorkFailedError as exc:
        echo(f"gpuviz {command}: {exc}", file=sys.stderr)
        # check's 1 is a regression: a cluster that failed to start (the only failure that
        # reaches here from check; its own are 3 already) is its internal failure, 3.
        return EXIT_CHECK_INTERNAL if command == "check" else EXIT_FAILED
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
