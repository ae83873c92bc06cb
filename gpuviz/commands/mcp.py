"""``gpuviz mcp [--root DIR]... [--allow-run]``: serve gpuviz's analyses to coding agents.

A Model Context Protocol server on stdin/stdout (:mod:`gpuviz.agents.server`), for an agent's
client to start. It reads only files under the roots (default: the current folder) and runs
no code unless ``--allow-run`` lets its ``profile`` tool start ``gpuviz profile``.
"""

from __future__ import annotations

import argparse


def main(args: argparse.Namespace) -> int:
    """Serve until the client closes the connection; a bad root is exit 2."""
    from gpuviz.agents.confine import Roots
    from gpuviz.agents.server import build_server

    roots = Roots(args.roots or ["."])
    build_server(roots, allow_run=args.allow_run).run("stdio")
    return 0
