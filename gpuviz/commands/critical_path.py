"""``gpuviz critical-path TRACE|DIR [--step N] [--json]``: what a step's end waited for.

Prints :func:`gpuviz.report.critical_path.path_report` (its JSON is documented in
:mod:`gpuviz.analysis.critical_path`): the step's longest path through its dependency graph,
its time by category, the ranks, kernels and top-level ops on it and the share of the step
each holds.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gpuviz.display import echo, json_text
from gpuviz.errors import BadInputError

if TYPE_CHECKING:
    from gpuviz.analysis.dep_graph import StepGraph
    from gpuviz.trace.model import Trace


def load_graph(args: argparse.Namespace) -> tuple[Trace, StepGraph]:
    """Read ``args.trace`` and build the graph of ``args.step`` (BadInputError saying why not)."""
    from gpuviz.commands.reading import read_trace
    from gpuviz.report.critical_path import step_graph

    if args.top < 0:
        raise BadInputError(f"--top {args.top}: expected 0 or a positive count")
    path = Path(args.trace)
    if not path.exists():
        raise BadInputError(f"{args.trace}: no such file or folder")
    trace = read_trace(path, say_dropped=True)
    try:
        return trace, step_graph(trace, args.step)
    except ValueError as exc:
        raise BadInputError(f"{args.trace}: {exc}") from None


def main(args: argparse.Namespace) -> int:
    """Print the critical path of one step of ``args.trace``."""
    from gpuviz.report.critical_path import format_path, path_report

    trace, g = load_graph(args)
    j = path_report(trace, g, args.top)
    echo(json_text(j) if args.json else "\n".join(format_path(j)))
    return 0
