"""``gpuviz`` with no command: open the app."""

from __future__ import annotations

import argparse


def main(args: argparse.Namespace) -> int:
    """Open the app's main window with no trace (its welcome page offers samples)."""
    del args  # the bare command takes no arguments
    from gpuviz.gui.app import run_app

    return run_app(())
