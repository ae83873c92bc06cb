"""``gpuviz memory DIR [--json]``: the allocator snapshots of a folder of ranks, in one table.

Each ``rank-N.memory.pickle`` (or ``.pickle.gz``) gets exactly the figures ``gpuviz memory FILE``
computes (:mod:`gpuviz.analysis.allocator_ranks`); the table lists, per rank and device, the
peak allocated, reserved, fragmentation, largest free block and any OOM, and one line names
the rank whose peak is highest. A file that cannot be read is left out of the table and named
on stderr (one line each, the others still shown; with ``--json`` also under ``"unreadable"``),
and the command exits 2: a bad rank is never lost in a table that looks whole.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuviz.analysis.allocator_ranks import RankTable


def main(args: argparse.Namespace) -> int:
    """Read every rank snapshot of ``args.snapshot`` (a folder); print the table or the JSON."""
    import sys

    from gpuviz.analysis.allocator_ranks import rank_table
    from gpuviz.display import echo, json_text
    from gpuviz.errors import BadInputError

    errors: list[str] = []
    table = rank_table(args.snapshot, top=args.top, on_error=errors.append)
    if errors and not table.ranks:
        raise BadInputError(errors[0])  # nothing to show: the first bad file, as one line
    if args.json:
        echo(json_text({**table.to_json(), "unreadable": errors}))
    else:
        echo(format_table(table, len(errors)))
    for line in errors:
        echo(f"gpuviz memory: {line}", file=sys.stderr)
    return 2 if errors else 0


def format_table(table: RankTable, unreadable: int = 0) -> str:
    """The text report of ``gpuviz memory DIR`` (``unreadable``: files left out of it)."""
    from gpuviz.analysis.allocator_ranks import COLUMNS, highest_peak_line, table_rows
    from gpuviz.display import terminal_safe

    rows = [COLUMNS, *table_rows(table)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        f"snapshots: {terminal_safe(table.source, one_line=True)} ({len(table.ranks)} "
        f"rank{'s' if len(table.ranks) != 1 else ''}"
        + (
            f"; {unreadable} file{'s' if unreadable != 1 else ''} unreadable, named on stderr)"
            if unreadable
            else ")"
        ),
        "",
    ]
    for row in rows:
        # numbers right-aligned; the device and the OOM read as words
        cells = [
            c.ljust(w) if i in (1, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    lines += ["", highest_peak_line(table)]
    return "\n".join(lines)
