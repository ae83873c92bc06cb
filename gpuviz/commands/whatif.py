"""``gpuviz whatif TRACE|DIR --faster NAME=FACTOR … | --remove NAME … [--rank R] [--step N]``.

Replays the step's dependency graph with the changes
(:func:`gpuviz.analysis.whatif.predict`) and prints the predicted step time and the new
critical path; ``--json`` prints :func:`gpuviz.report.critical_path.whatif_report`'s JSON.
A NAME that matches nothing in the step is bad input (exit 2).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from gpuviz.display import echo, json_text
from gpuviz.errors import BadInputError

if TYPE_CHECKING:
    from gpuviz.analysis.whatif import Change


def parse_changes(args: argparse.Namespace) -> list[Change]:
    """The ``--faster``/``--remove`` options as :class:`~gpuviz.analysis.whatif.Change` s."""
    from gpuviz.analysis.whatif import Change

    changes = []
    for spec in args.faster:
        name, sep, factor = spec.rpartition("=")
        try:
            f = float(factor)
        except ValueError:
            f = float("nan")
        if not sep or not name or not math.isfinite(f) or f <= 0:
            raise BadInputError(
                f"--faster {spec}: expected NAME=FACTOR with a FACTOR above 0 (2: twice as fast)"
            )
        changes.append(Change(name, f, args.rank))
    for name in args.remove:
        if not name:
            raise BadInputError("--remove: expected a NAME")
        changes.append(Change(name, None, args.rank))
    if not changes:
        raise BadInputError("name some work: --faster NAME=FACTOR or --remove NAME")
    return changes


def main(args: argparse.Namespace) -> int:
    """Print the prediction for ``args``' changes on one step of ``args.trace``."""
    from gpuviz.commands.critical_path import load_graph
    from gpuviz.report.critical_path import format_whatif, whatif_report

    changes = parse_changes(args)
    trace, g = load_graph(args)
    if args.rank is not None and args.rank not in g.ranks.tolist():
        ranks = ", ".join(str(r) for r in g.ranks.tolist())
        raise BadInputError(f"--rank {args.rank}: not a rank of step {g.number} (ranks: {ranks})")
    j, p = whatif_report(trace, g, changes, args.top)
    if p.unmatched:
        raise BadInputError(
            f"{args.trace}: step {g.number} has no work named {', '.join(p.unmatched)}"
        )
    echo(json_text(j) if args.json else "\n".join(format_whatif(j)))
    return 0
