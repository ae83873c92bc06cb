"""``gpuviz split --batch B --gpus N``: DataParallel's per-GPU rows for a batch."""

from __future__ import annotations

import argparse

from gpuviz.analysis.split_plan import plan_split, split_input_error
from gpuviz.display import echo, json_text
from gpuviz.errors import BadInputError


def main(args: argparse.Namespace) -> int:
    """Print the rows each GPU receives (text, or ``--json``)."""
    why = split_input_error(args.batch, args.gpus)
    if why is not None:
        raise BadInputError(why)
    rows = plan_split(args.batch, args.gpus)
    if args.json:
        echo(json_text({"batch": args.batch, "gpus": args.gpus, "rows": rows}))
        return 0
    idle = sum(1 for r in rows if r == 0)
    echo(
        f"batch {args.batch} on {args.gpus} GPU{'s' if args.gpus != 1 else ''}: "
        + ", ".join(str(r) for r in rows)
    )
    for i, r in enumerate(rows):
        echo(f"  cuda:{i}  {r:>6} row{'' if r == 1 else 's'}{'  (idle)' if r == 0 else ''}")
    if idle:
        echo(
            f"{idle} GPU{'s' if idle != 1 else ''} get no rows: Tensor.chunk makes "
            f"chunks of ceil({args.batch}/{args.gpus}) rows, so fewer chunks than GPUs."
        )
    return 0
