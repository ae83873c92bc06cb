"""``gpuviz export TRACE -o OUT.json[.gz]`` or ``--per-rank DIR``: normalized Chrome traces."""

from __future__ import annotations

import argparse
import sys

from gpuviz.display import echo


def main(args: argparse.Namespace) -> int:
    """Load ``args.trace`` and write one merged file (``args.output``) or per-rank files."""
    from pathlib import Path

    from gpuviz.commands.reading import read_trace, say_warnings
    from gpuviz.errors import BadInputError, WorkFailedError
    from gpuviz.trace.chrome_export import export_chrome, export_per_rank

    src = Path(args.trace)
    if not src.exists():
        raise BadInputError(f"{args.trace}: no such file or folder")
    output = getattr(args, "output", None)
    per_rank = getattr(args, "per_rank", None)
    if output:
        out = Path(output)
        if not out.name.endswith((".json", ".json.gz")):
            raise BadInputError(f"-o {output}: expected a .json or .json.gz file name")
        if out.is_dir():
            raise BadInputError(f"-o {output}: is a folder")
        if not out.parent.exists():
            raise BadInputError(f"-o {output}: folder {out.parent} does not exist")
    elif per_rank:
        out = Path(per_rank)
        if out.exists() and not out.is_dir():
            raise BadInputError(f"--per-rank {per_rank}: exists and is not a folder")
    else:
        raise BadInputError("give -o OUT.json[.gz] or --per-rank DIR")
    trace = read_trace(src)
    # stdout lists the files written (scripts read it); what the import warned of goes to
    # stderr, as summary and advise print it in their reports.
    say_warnings(trace, "export")
    try:
        if output:
            written = [export_chrome(trace, out)]
        else:
            written = export_per_rank(trace, out)
    except OSError as exc:
        raise WorkFailedError(f"{out}: cannot write: {exc.strerror or exc}") from exc
    for p in written:
        echo(p, file=sys.stdout)
    return 0
