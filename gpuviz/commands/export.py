"""``gpuviz export TRACE -o OUT.json[.gz]`` or ``--per-rank DIR``: normalized Chrome traces."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from gpuviz.display import echo

if TYPE_CHECKING:
    from pathlib import Path


def main(args: argparse.Namespace) -> int:
    """Load ``args.trace`` and write one merged file (``args.output``) or per-rank files."""
    from pathlib import Path

    from gpuviz.commands.reading import read_trace, say_warnings
    from gpuviz.errors import BadInputError, WorkFailedError
    from gpuviz.trace.chrome_export import OwnInputError, export_chrome, export_per_rank

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
    _refuse_input_overlap(src, out, "-o" if output else "--per-rank")
    trace = read_trace(src)
    # stdout lists the files written (scripts read it); what the import warned of goes to
    # stderr, as summary and advise print it in their reports.
    say_warnings(trace, "export")
    try:
        if output:
            written = [export_chrome(trace, out)]
        else:
            written = export_per_rank(trace, out)
    except OwnInputError as exc:  # a rank file of --per-rank DIR is the input (a lone file's)
        raise BadInputError(f"{'-o' if output else '--per-rank'} {exc}") from None
    except OSError as exc:
        raise WorkFailedError(f"{out}: cannot write: {exc.strerror or exc}") from exc
    for p in written:
        echo(p, file=sys.stdout)
    return 0


def _refuse_input_overlap(src: Path, out: Path, option: str) -> None:
    """Refuse an output that is the input, or that lands in the input folder.

    ``gpuviz export X -o X`` truncated its own input. Compared by device and inode (so a
    symlink or hard link to the input is the input too). A folder's output may not go into
    that folder either: ``-o`` would add a file that the next read takes for one more rank,
    and ``--per-rank`` would overwrite or add its ``rank-N.json.gz``; nor may ``--per-rank``
    go into the folder that holds a lone input file (its rank files would land beside it, one
    of them maybe over it or over another rank's file).
    """
    import os

    from gpuviz.errors import BadInputError
    from gpuviz.trace.files import trace_files

    def same(a: Path, b: Path) -> bool:
        try:
            return os.path.samefile(a, b)
        except OSError:  # one of them is not there
            return False

    inputs = trace_files(src)
    for f in inputs:
        if same(out, f):
            name = "" if str(out) == str(f) else f" (the same file as {f})"
            raise BadInputError(
                f"{option} {out}: is the trace's own input{name}; writing it would destroy it"
            )
    if option == "--per-rank" and not src.is_dir():
        # rank-N.json.gz beside the input: over it, or over the files of the run it belongs to
        if same(out, inputs[0].parent):
            raise BadInputError(
                f"--per-rank {out}: holds the input {inputs[0]}; its rank-N.json.gz files would "
                "be written beside it, or over it; write them elsewhere"
            )
    if src.is_dir():
        folder = out if option == "--per-rank" else out.parent
        if same(folder, src):
            raise BadInputError(
                f"{option} {out}: is in the input folder {src}, whose files are the trace's "
                "ranks; write it elsewhere"
            )
