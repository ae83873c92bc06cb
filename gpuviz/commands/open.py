"""``gpuviz open TRACE... [--view V] [--screenshot OUT.png] [--size WxH] [--ranks-reduced]
[--compile-info DIR]``: traces in the app."""

from __future__ import annotations

import argparse
import os

from gpuviz.errors import BadInputError

REDUCED_ENV = "GPUVIZ_RANKS_REDUCED"


def main(args: argparse.Namespace) -> int:
    """Open each trace in its own tab; with ``--screenshot``, save a PNG offscreen and exit."""
    for path in args.traces:
        if not os.path.exists(path):
            raise BadInputError(f"{path}: no such file or folder")
    if args.screenshot and not args.screenshot.lower().endswith(".png"):
        raise BadInputError(f"--screenshot {args.screenshot}: expected a .png file name")
    compile_info = getattr(args, "compile_info", None)
    if compile_info is not None:
        if len(args.traces) != 1:
            raise BadInputError(
                "--compile-info: give one TRACE (the folder is one run's; each trace's "
                "NAME.compile/ beside it is found without the option)"
            )
        from gpuviz.commands.reading import given_compile_info

        given_compile_info(compile_info)  # a folder that is not one: exit 2, before Qt starts
    # Qt is imported here, when the command runs, never when gpuviz.cli is imported.
    from gpuviz.gui.app import run_app

    asked = getattr(args, "ranks_reduced", None)
    before = os.environ.get(REDUCED_ENV)
    if asked is not None:
        # The load worker reads it (gpuviz.analysis.rank_reduction_map.wants_reduction), for
        # this command only: an in-process caller's later opens must not inherit it.
        os.environ[REDUCED_ENV] = "1" if asked else "0"
    try:
        return run_app(
            args.traces,
            view=args.view,
            screenshot=args.screenshot,
            size=tuple(args.size) if args.size else None,
            compile_info=compile_info,
        )
    finally:
        if asked is not None:
            if before is None:
                os.environ.pop(REDUCED_ENV, None)
            else:
                os.environ[REDUCED_ENV] = before
