"""Where each file of an import sits among the ranks: its rank, and where its clock starts.

:func:`assign_ranks` is the rule that gives a folder's files their ranks (the declared ones,
or file order, and why), :func:`_base_ns` a file's ``baseTimeNanoseconds``. They read only
what the files declare, before any column is joined, so they are apart from the assembly in
:mod:`gpuviz.trace.kineto`, which re-exports :func:`assign_ranks`.
"""

from __future__ import annotations

import math
from typing import Any


def assign_ranks(
    declared: list[int | None], paths: list[str], is_folder: bool
) -> tuple[list[int | None], str]:
    """The ranks of a trace's files, from the ranks they declare
    (:func:`~gpuviz.trace.one_job.declared_rank`), in file order, and why the declared ones
    were not used ("" when they were).

    A folder's files take their declared ranks where every file declares a distinct one, else
    their place in file order; a lone file keeps its own (None where it declares none).
    """
    if not is_folder:
        return [declared[0]], ""
    if all(r is not None for r in declared) and len(set(declared)) == len(declared):
        return declared, ""
    claims: dict[int, list[str]] = {}
    for path, r in zip(paths, declared):
        if r is not None:
            claims.setdefault(r, []).append(path)
    order: list[int | None] = list(range(len(paths)))
    if not claims:  # no file declares one: file order is simply the rule
        return order, ""
    why = [f"rank {r} is claimed by {_some(named)}" for r, named in claims.items()
           if len(named) > 1]  # fmt: skip
    missing = [path for path, r in zip(paths, declared) if r is None]
    if missing:
        why.append(f"{_some(missing)} declare{'s' if len(missing) == 1 else ''} no rank")
    return order, f"distributedInfo.rank ignored, ranks taken from file order: {'; '.join(why)}"


def _some(paths: list[str], n: int = 3) -> str:
    """``a, b and c``, or ``a, b, c and 4 more``."""
    if len(paths) <= n:
        return " and ".join([", ".join(paths[:-1]), paths[-1]]) if len(paths) > 1 else paths[0]
    return f"{', '.join(paths[:n])} and {len(paths) - n} more"


def _base_ns(metadata: dict[str, Any]) -> int:
    b = metadata.get("baseTimeNanoseconds")
    if isinstance(b, bool):
        return 0
    if isinstance(b, int):
        return b
    if isinstance(b, float) and math.isfinite(b):
        return int(b)
    if isinstance(b, str) and b.strip().isdigit():
        return int(b)
    return 0
