"""Text tables: the aligned columns of ``summary``, ``breakdown``, ``advise`` and the agents'
answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuviz.display import terminal_safe


def text_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], left: Sequence[int] = ()
) -> list[str]:
    """Columns padded to fit; the columns ``left`` left-aligned, the rest right-aligned.

    Each cell is made one safe line first (a kernel name is data: escapes shown, not run); a
    cell already safe is unchanged (:func:`~gpuviz.display.terminal_safe` applied twice
    changes nothing more).

    Parameters
    ----------
    headers : sequence of str
        The column titles.
    rows : sequence of sequences
        One sequence of cells per row, as many as ``headers``; each is written as ``str()``.
    left : sequence of int
        Indices of the columns aligned left.

    Returns
    -------
    list of str
        The header line then one line per row, each indented by two spaces, trailing blanks
        stripped.
    """
    cells = [[str(h) for h in headers]] + [
        [terminal_safe(str(c), one_line=True) for c in r] for r in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        parts = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  " + "  ".join(parts).rstrip())
    return lines
