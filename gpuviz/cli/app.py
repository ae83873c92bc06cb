"""The parsers of the app and the agents' server: open and mcp
(:mod:`gpuviz.cli` adds them by name)."""

from __future__ import annotations

import argparse
from typing import Any

from gpuviz.cli.options import add_cluster, add_compile_info, add_max_memory, add_no_cache, size
from gpuviz.gui.view_names import VIEWS


def add_open(sub: Any) -> None:
    o = sub.add_parser("open", help="open traces in the app (each in its own tab)")
    o.add_argument(
        "traces", nargs="+", metavar="TRACE", help="a trace file or a folder of per-rank files"
    )
    o.add_argument("--view", choices=VIEWS, default="insights")
    o.add_argument("--screenshot", metavar="OUT.png", help="render offscreen, save, exit")
    o.add_argument(
        "--size",
        type=size,
        default=None,
        metavar="WxH",
        help="the window's size (default: fitted to the screen, as last closed; 1600x900 "
        "with --screenshot)",
    )
    o.add_argument(
        "--ranks-reduced",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="open a rank folder from its ranks' reductions: the Ranks view first, without "
        "loading the ranks' events; a rank loads (from its cache entry) when opened from it "
        "(GPUVIZ_RANKS_REDUCED=1/0; default: for folders of 64 ranks or more). With "
        "--cluster the ranks are reduced on the cluster's workers",
    )
    add_cluster(o)
    add_compile_info(o)
    add_no_cache(o)
    add_max_memory(o)


def add_mcp(sub: Any) -> None:
    """``gpuviz mcp``: the coding agents' server."""
    m = sub.add_parser(
        "mcp", help="serve gpuviz's analyses to coding agents (an MCP server on stdio)"
    )
    m.add_argument(
        "--root",
        dest="roots",
        action="append",
        default=[],
        metavar="DIR",
        help="serve files under DIR only (repeatable; default: the current folder)",
    )
    m.add_argument(
        "--allow-run",
        action="store_true",
        help="let the profile tool run scripts under the roots (off by default)",
    )


__all__ = ["add_mcp", "add_open"]
