"""``gpuviz memory DIR [--json]``: the allocator snapshots of a folder of ranks, in one table.

Each ``rank-N.memory.pickle`` (or ``.pickle.gz``) gets exactly the figures ``gpuviz memory FILE``
computes (:mod:`gpuviz.analysis.allocator_ranks`); the table lists, per rank and device, the
peak allocated, reserved, fragmentation, largest free block and any OOM, and one line names
the rank whose peak is highest. A file that cannot be read stops the command: exit 2, one line
naming it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuviz.analysis.allocator_ranks import RankTable


def main(args: argparse.Namespace) -> int:
    """Read every rank snapshot of ``args.snapshot`` (a folder); print the table or the JSON."""
    from gpuviz.analysis.allocator_ranks import rank_table
    from gpuviz.display import echo, json_text

    table = rank_table(args.snapshot, top=args.top)
    echo(json_text(table.to_json()) if args.json else format_table(table))
    return 0


def format_table(table: RankTable) -> str:
    """The text report of ``gpuviz memory DIR``."""
    from gpuviz.analysis.allocator_ranks import COLUMNS, highest_peak_line, table_rows
    from gpuviz.display import terminal_safe

    rows = [COLUMNS, *table_rows(table)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        f"snapshots: {terminal_safe(table.source, one_line=True)} ({len(table.ranks)} "
        f"rank{'s' if len(table.ranks) != 1 else ''})",
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
