"""Tables in pages of whole rows: what the ``breakdown``, ``events`` and ``files`` tools give.

An answer has a size limit (:data:`~gpuviz.agents.answers.LIMIT` characters of text); a table
longer than that is not cut at a character (which could end mid-row, and would contradict
``top=0``, "all rows") but given in pages: as many whole rows as fit from ``cursor`` on, with
the cursor of the next page. The same rows are in the text and in ``structuredContent``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuviz.errors import BadInputError

PAGE_ROWS_MAX = 2000
"""Rows one answer gives at most, however short."""


@dataclass(frozen=True)
class Page:
    """Rows ``first`` to ``first + count`` of the ``selected`` rows a question asks for (of a
    table of ``total``)."""

    first: int
    count: int
    selected: int
    total: int

    @property
    def next_cursor(self) -> int | None:
        """The cursor of the next page; None when this one ends the selection."""
        end = self.first + self.count
        return end if end < self.selected else None

    def to_json(self) -> dict[str, Any]:
        """``{first, count, selected, total, next_cursor}`` (:class:`~gpuviz.agents.schemas.Page`)."""
        return {
            "first": self.first,
            "count": self.count,
            "selected": self.selected,
            "total": self.total,
            "next_cursor": self.next_cursor,
        }

    def span(self, what: str = "rows") -> str:
        """``all 12 rows`` / ``rows 16–30 of 120``."""
        if self.count == self.selected == self.total:
            return f"all {self.total} {what}"
        if self.count == 0:
            return f"no {what}"
        return f"{what} {self.first + 1}–{self.first + self.count} of {self.selected}"

    def more_line(self, what: str = "rows") -> str | None:
        """What is left and how to get it, or None."""
        nxt = self.next_cursor
        if nxt is not None:
            return (
                f"… {self.selected - nxt} more {what}: call again with cursor={nxt} for the "
                "next ones."
            )
        return None


def check_cursor(cursor: int, selected: int) -> None:
    """Refuse a cursor past the rows asked for (0 is always valid)."""
    if cursor < 0 or (cursor > 0 and cursor >= selected):
        raise BadInputError(
            f"cursor {cursor}: past the last row ({selected} rows; cursors run 0–"
            f"{max(selected - 1, 0)}, from the next_cursor of the previous answer)."
        )


def rows_that_fit(rows: Sequence[str], budget: int, cursor: int, limit: int = PAGE_ROWS_MAX) -> int:
    """How many of ``rows[cursor:]`` (text lines) fit in ``budget`` characters: at least one
    (a row longer than the budget still goes whole), at most ``limit``."""
    n, used = 0, 0
    for line in rows[cursor : cursor + limit]:
        size = len(line) + 1
        if n and used + size > budget:
            break
        used += size
        n += 1
    return n
