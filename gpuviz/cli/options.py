"""Options that several commands' parsers share, and the argument types that check them.

``--size``, ``--peak-tflops``/``--peak-bandwidth``, ``--no-cache``, ``--max-memory``, and
``gpuviz check``'s percent limits. Nothing heavy is imported here (:mod:`gpuviz.cli`).
"""

from __future__ import annotations

import argparse
from typing import Any

from gpuviz.errors import BadInputError

MAX_SIDE = 16384
MAX_PIXELS = 16384 * 4096
"""``--size`` limits: Qt's own limit on a side, and 64 Mpx (a 256 MiB ARGB image; the window
and its grab take a few of those). 100000x100000 grew past 15 GB before it failed."""


def size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size {text!r}: expected WxH, e.g. 1600x900") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"--size {text!r}: width and height must be positive")
    if w > MAX_SIDE or h > MAX_SIDE or w * h > MAX_PIXELS:
        raise argparse.ArgumentTypeError(
            f"--size {text!r}: at most {MAX_SIDE} pixels a side and "
            f"{MAX_PIXELS // 2**20} Mpx in all (e.g. 8192x8192)"
        )
    return w, h


def peak(option: str) -> Any:
    def parse(text: str) -> float:
        # the command module holds the rule (and the bounds); it imports nothing heavy
        from gpuviz.commands.peak_options import parse_peak

        try:
            return parse_peak(option, text)
        except ValueError as exc:  # argparse names the option itself
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{option} ")) from None

    return parse


def add_peak_options(p: argparse.ArgumentParser) -> None:
    """``--peak-tflops X --peak-bandwidth Y``: the device's peaks, over gpuviz's table."""
    p.add_argument(
        "--peak-tflops",
        type=peak("--peak-tflops"),
        metavar="X",
        help="dense peak TFLOP/s to measure MFU and rooflines against (every precision), "
        "instead of the table's for the trace's GPU (0.001 to 100000)",
    )
    p.add_argument(
        "--peak-bandwidth",
        type=peak("--peak-bandwidth"),
        metavar="Y",
        help="peak memory bandwidth in TB/s, instead of the table's (0.001 to 1000)",
    )


def add_compile_info(p: argparse.ArgumentParser) -> None:
    """``--compile-info DIR`` for a command whose tables place kernels on modules and lines."""
    p.add_argument(
        "--compile-info",
        metavar="DIR",
        help="torch.compile'd runs: Inductor's debug/provenance folder of the run (what "
        "`gpuviz profile --compile-info` writes beside the trace as NAME.compile/, found there "
        "without this option; or TORCH_COMPILE_DEBUG=1 with INDUCTOR_PROVENANCE=1), so that "
        "compiled kernels count on the modules and lines that wrote them, and Inductor's "
        "generated kernels get the FLOPs of the FX nodes they fuse (in MFU and coverage); "
        "without it their names say which ops they fuse and their FLOPs are unknown "
        "(docs/attribution.md, docs/flops.md)",
    )


def add_no_cache(p: argparse.ArgumentParser) -> None:
    """``--no-cache`` for a command that loads traces (``main`` turns it into the env var)."""
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="import the trace files again, without the import cache (GPUVIZ_NO_CACHE=1)",
    )


def add_capture_trace(p: argparse.ArgumentParser) -> None:
    """``--capture-trace PATH``: a trace of the CUDA/HIP graph capture for the run's replays."""
    p.add_argument(
        "--capture-trace",
        metavar="PATH",
        help="a trace of the CUDA/HIP graph capture (a file, or a folder like vLLM's "
        "capture_traces/): each replayed kernel goes to the op, module and line that launched "
        "it at capture (default: capture_traces/ beside TRACE, where there is one)",
    )


def add_cluster(p: argparse.ArgumentParser) -> None:
    """``--cluster`` and ``--cache-dir`` for a command that reads rank folders (``main``
    connects to the cluster and sets ``GPUVIZ_CACHE_DIR``)."""
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="read a rank folder's files on a Dask cluster: a scheduler's address "
        "(tcp://host:8786), or local / local:N for a LocalCluster of N worker processes "
        "(GPUVIZ_CLUSTER; needs pip install 'gpuviz[cluster]'; see docs/cluster.md). The "
        "output is the local pool's, byte for byte; an unreachable scheduler exits 2",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        help="the import cache's folder (GPUVIZ_CACHE_DIR): on storage the cluster's workers "
        "share (beside the traces), a later open on any machine reads the entries they wrote",
    )


def max_memory(text: str) -> str:
    from gpuviz.trace.memory_budget import parse_size  # only when the option is given

    try:
        parse_size(text)
    except BadInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


def add_max_memory(p: argparse.ArgumentParser) -> None:
    """``--max-memory`` for a command that loads traces (``main`` turns it into the env var)."""
    p.add_argument(
        "--max-memory",
        type=max_memory,
        default=None,
        metavar="SIZE",
        help="memory the import may take, e.g. 8G (GPUVIZ_MAX_MEMORY; default: half the RAM); "
        "a trace that would take more is read without the args text of its CPU ops, then "
        "without its python_function slices, and the command says so",
    )


def percent(text: str) -> float:
    # The parser's type for check's limits; the command module holds the rule.
    from gpuviz.commands.check import percent

    return percent(text)


__all__ = [
    "MAX_PIXELS",
    "MAX_SIDE",
    "add_max_memory",
    "add_no_cache",
    "add_peak_options",
    "max_memory",
    "peak",
    "percent",
    "size",
]
