"""``gpuviz check NEW --against BASELINE``: the CI gate, comparing two runs of the same job.

Exit 0 when NEW is within the limits; 1 with a short report when its mean step grew by more
than ``--max-step-regression`` (default 5%), its peak GPU memory by more than
``--max-memory-regression`` (10%, when both runs recorded memory), or it has a finding at or
above ``--fail-on`` (critical) that the baseline has not; 2 for bad input (a folder whose
files are not one job among it); 3 when gpuviz itself failed ("internal error: ..." on
stderr, the traceback with ``--debug`` or ``GPUVIZ_DEBUG=1``), so that a CI gate never reads a
crash as a regression. Each run's import warnings are listed under its name (``--json``:
``import_warnings``, present when there are any). ``--json`` prints
the same as one object: the comparison (:class:`~gpuviz.analysis.run_compare.RunComparison`:
step time, peak memory, MFU, findings, kernel, op and module deltas), the limits, ``passed``
and ``regressions``.

With ``--cluster``, each run that is a rank folder is compared from its ranks' files, a rank
a task (:mod:`gpuviz.commands.check_ranks`): its advice rank by rank, then its kernel, op and
module totals, peak memory, hardware figures and per-step counts summed from the ranks' parts;
the output is the runs' read whole, byte for byte. Where that declines (a folder within the
advise replay's limits, a rank that failed, figures that cannot be summed exactly), the run's
rank files are decoded on the workers and the run is assembled whole on the client, as before
(docs/cluster.md).

:func:`~gpuviz.report.comparison.format_comparison_brief` (the text) is also what
``gpuviz mcp``'s ``compare`` tool answers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gpuviz.display import echo, json_text, terminal_safe
from gpuviz.errors import BadInputError
from gpuviz.report.comparison import format_comparison_brief

if TYPE_CHECKING:
    from gpuviz.analysis.run_compare import RunInputs


def percent(text: str) -> float:
    """An argparse type: ``5%`` or ``5`` -> 0.05 (a share; never negative).

    A bare number between 0 and 1 is refused: ``0.05`` read as percent was 0.05%, where the
    user most likely meant a fraction (5%); ``5%`` or ``0.05%`` say which (issue 47, item 20).
    """
    stripped = text.strip()
    raw = stripped.removesuffix("%").strip()
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage, e.g. 5%") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage of 0 or more")
    if 0 < value < 1 and not stripped.endswith("%"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a percentage, so {value:g} means {value:g}%, not {value * 100:g}%: "
            f"write {value * 100:g}% or {value:g}%"
        )
    return value / 100.0


EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
"""``gpuviz check``'s exit codes (DESIGN.md, Round 4): a CI gate must never read a crash as a
regression, so gpuviz's own failure has a code of its own."""
DEBUG_ENV = "GPUVIZ_DEBUG"
"""``1``: an internal failure prints its traceback (as ``--debug`` does)."""


def main(args: argparse.Namespace) -> int:
    """Compare ``args.new`` with ``args.against``: 0 within the limits, 1 a regression, 2 bad
    input (raised as :class:`~gpuviz.errors.BadInputError`), 3 an internal failure."""
    try:
        return _check(args)
    except (BadInputError, KeyboardInterrupt, BrokenPipeError):
        raise  # 2, 130 and a closed pipe: the CLI's own handling
    except OSError as exc:
        if exc.filename is None:
            return _internal(args, exc)
        # An input that cannot be read (no permission, a folder that vanished): bad input.
        raise BadInputError(f"{exc.filename}: {exc.strerror or exc}") from None
    except Exception as exc:  # gpuviz itself failed: its own code, never 1
        return _internal(args, exc)


def _internal(args: argparse.Namespace, exc: BaseException) -> int:
    """Say that gpuviz failed (one line; the traceback with ``--debug``); EXIT_INTERNAL."""
    import os
    import sys

    from gpuviz.display import echo_traceback

    debug = getattr(args, "debug", False) or os.environ.get(DEBUG_ENV, "0") not in ("", "0")
    if debug:
        echo_traceback()
    what = terminal_safe(f"{type(exc).__name__}: {exc}", one_line=True)
    hint = "" if debug else f" (--debug or {DEBUG_ENV}=1 prints the traceback)"
    echo(
        f"gpuviz check: internal error: {what}; exit {EXIT_INTERNAL}, not a regression{hint}",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def _check(args: argparse.Namespace) -> int:
    from gpuviz.analysis.run_compare import Limits, compare_inputs, regressions

    inputs_a = _inputs(args.against, "--against")
    inputs_b = _inputs(args.new, "NEW")
    baseline, new = inputs_a.advice, inputs_b.advice
    limits = Limits(args.max_step_regression, args.max_memory_regression, args.fail_on)
    cmp = compare_inputs(inputs_a, inputs_b)
    regs = regressions(cmp, limits)
    if args.json:
        out = cmp.to_json()
        out["limits"] = limits.to_json()
        out["passed"] = not regs
        out["regressions"] = [r.to_json() for r in regs]
        warned = {"baseline": baseline.warning_samples, "new": new.warning_samples}
        if any(warned.values()):
            out["import_warnings"] = {k: list(v) for k, v in warned.items()}
        echo(json_text(out))
    else:
        echo(format_comparison_brief(cmp, limits, regs))
    return EXIT_REGRESSION if regs else EXIT_OK


def _inputs(path: str, what: str) -> RunInputs:
    """One run's comparison inputs: rank by rank on a cluster where they can be
    (:mod:`gpuviz.commands.check_ranks`), else from the run read whole."""
    from gpuviz.analysis.advisor import advise
    from gpuviz.analysis.run_compare import run_inputs
    from gpuviz.commands.check_ranks import run_inputs_by_rank
    from gpuviz.commands.reading import read_trace

    if not Path(path).exists():
        raise BadInputError(f"{path}: no such file or folder ({what})")
    got = run_inputs_by_rank(Path(path))
    if got is None:
        # What a memory limit left out is said on stderr as well, for --json's readers.
        got = run_inputs(advise(read_trace(path, say_dropped=True)))
    if len(got.advice.breakdown.steps) == 0:
        raise BadInputError(f"{path}: no steps: the trace has no events with a duration")
    return got


__all__ = ["EXIT_INTERNAL", "format_comparison_brief", "main", "percent"]
