"""Rank filters such as ``"0-7,12"``: which ranks of a multi-rank trace to show.

A filter is a comma-separated list of ranks and inclusive ranges (``"3"``, ``"0-7"``,
``"0-7, 12, 40-"``; an open end runs to the last rank, an open start from the first). Blank
text means every rank. Ranks the trace does not have are ignored, so ``"0-63"`` on an 8-rank
trace shows all eight.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_PART = re.compile(r"^\s*(\d*)\s*(-)?\s*(\d*)\s*$")


def parse_rank_filter(text: str, ranks: Iterable[int]) -> frozenset[int] | None:
    """The ranks of ``ranks`` that ``text`` selects; None for blank text (no filter).

    Parameters
    ----------
    text : str
        The filter, e.g. ``"0-7,12"``.
    ranks : iterable of int
        The trace's ranks.

    Returns
    -------
    frozenset of int or None

    Raises
    ------
    ValueError
        When a part is not a rank or a range (the message names the part), or a range runs
        backwards.

    Examples
    --------
    >>> sorted(parse_rank_filter("0-2, 5", range(8)))
    [0, 1, 2, 5]
    >>> sorted(parse_rank_filter("6-", range(8)))
    [6, 7]
    """
    if not text or not text.strip():
        return None
    have = sorted({int(r) for r in ranks})
    lo_all, hi_all = (have[0], have[-1]) if have else (0, -1)
    picked: set[int] = set()
    for part in text.split(","):
        if not part.strip():
            continue
        m = _PART.match(part)
        if m is None or (not m.group(1) and not m.group(3)):
            raise ValueError(f"{part.strip()!r} is not a rank or a range like 0-7")
        a, dash, b = m.group(1), m.group(2), m.group(3)
        if not dash:
            if not a or b:
                raise ValueError(f"{part.strip()!r} is not a rank or a range like 0-7")
            lo = hi = int(a)
        else:
            lo = int(a) if a else lo_all
            hi = int(b) if b else hi_all
            if a and b and hi < lo:
                raise ValueError(f"{part.strip()!r} runs backwards")
        picked.update(r for r in have if lo <= r <= hi)
    return frozenset(picked)


def format_ranks(ranks: Iterable[int]) -> str:
    """Ranks as the shortest filter text: ``[0, 1, 2, 3, 7]`` -> ``"0-3,7"``."""
    rs = sorted({int(r) for r in ranks})
    parts: list[str] = []
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        parts.append(str(rs[i]) if j == i else f"{rs[i]}-{rs[j]}")
        i = j + 1
    return ",".join(parts)


__all__ = ["format_ranks", "parse_rank_filter"]
