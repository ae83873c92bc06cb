"""``loops``: f(x) = x² over N elements, from a Python for loop to one kernel.

The question it answers: "My for loop over a tensor is slow. How do I parallelize it on one
GPU?" The tutorial's for loop launches one kernel per element; the other strategies do the
same work with one launch (vectorized, ``torch.vmap``), K launches on K streams, or one graph
launch that replays the loop's N kernels. The last strategy is the tutorial's literal attempt,
``nn.DataParallel(function)``: on a machine with GPUs it fails, because DataParallel wraps an
``nn.Module`` (it moves the module's parameters to each GPU) and a function has none; with no
GPU, DataParallel keeps no devices and just calls the function.
"""

from __future__ import annotations

from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

DATAPARALLEL_REASON = (
    "nn.DataParallel wraps an nn.Module: it moves the module's parameters and buffers to each "
    "GPU (module.to, module.parameters()), and a plain function has neither, so the wrapper "
    "fails on a machine with GPUs. With no GPU it keeps no devices and just calls the function. "
    "To parallelize a function over elements, vectorize it (or torch.vmap it)."
)

STRATEGIES = ("for_loop", "vectorized", "vmap", "streams", "cuda_graph", "dataparallel_function")

WORKLOAD = WorkloadSpec(
    name="loops",
    title="A for loop over a tensor vs vectorized, vmap, streams and a CUDA graph",
    help=(
        "f(x)=x² over N elements: a Python for loop with one kernel launch per element (the "
        "tutorial's method), vectorized, torch.vmap, chunks on K CUDA streams, a CUDA graph of "
        "the loop, and the tutorial's nn.DataParallel(function) attempt. Reports each strategy's "
        "time, its speedup over the loop, its kernel launches and the GPU's idle share."
    ),
    params=(
        Param(
            "n", "int", 0, "elements; 0 uses the tutorial's data", minimum=0, maximum=100_000_000
        ),
        Param(
            "data",
            "ints",
            [1, 2, 3, 4, 5],
            "the input when n is 0 (the tutorial's data)",
            min_len=1,
            max_len=100_000,
        ),
        Param(
            "streams", "int", 4, "K: CUDA streams for the chunked strategy", minimum=1, maximum=64
        ),
        Param(
            "dtype", "choice", "float32", "element type", choices=("float32", "float64", "int64")
        ),
        Param("only", "choice", "all", "run only this strategy", choices=("all", *STRATEGIES)),
    ),
    entry="gpuviz.workloads.loops:build",
)


def f(x: Any) -> Any:
    """The tutorial's function."""
    return x**2


def build(ctx: RunContext) -> Plan:
    """The plan of ``loops`` (see the module docstring)."""
    import torch

    p = ctx.params
    device = ctx.device
    dtype = getattr(torch, p["dtype"])
    if p["n"] > 0:
        x = torch.arange(p["n"], device=device).to(dtype)
    else:
        x = torch.tensor(p["data"], device=device, dtype=dtype)
    n = int(x.numel())
    k = max(1, min(p["streams"], n))

    def for_loop() -> Any:
        return [f(v) for v in x]  # one pow kernel per element, as in the tutorial

    def vectorized() -> Any:
        return f(x)

    vf = torch.vmap(f)

    def vmapped() -> Any:
        return vf(x)

    # -- chunks on K streams --------------------------------------------------------------
    st: dict[str, Any] = {}

    def streams_setup() -> None:
        st["streams"] = [torch.cuda.Stream(device=device) for _ in range(k)]
        st["out"] = torch.empty_like(x)
        st["chunks"] = list(zip(x.chunk(k), st["out"].chunk(k)))

    def streams_step() -> Any:
        main = torch.cuda.current_stream(device)
        for s, (xi, oi) in zip(st["streams"], st["chunks"]):
            s.wait_stream(main)  # inputs are ready on the main stream
            with torch.cuda.stream(s):
                torch.pow(xi, 2, out=oi)
        for s in st["streams"]:
            main.wait_stream(s)  # the CUDA events on the main stream enclose all chunks
        return st["out"]

    # -- a CUDA graph of the for loop -----------------------------------------------------
    g: dict[str, Any] = {}

    def graph_setup() -> None:
        side = torch.cuda.Stream(device=device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for_loop()  # warm up on a side stream before capture, as torch.cuda.graphs asks
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            g["out"] = for_loop()
        g["graph"] = graph

    def graph_step() -> Any:
        g["graph"].replay()
        return g["out"]

    def graph_teardown() -> None:
        g.clear()

    # -- the tutorial's nn.DataParallel(function) -----------------------------------------
    def dataparallel_function() -> Any:
        wrapped = torch.nn.DataParallel(f)  # type: ignore[type-var]  # the point: f is no Module
        return wrapped(x)

    reference: dict[str, Any] = {}

    def check(name: str, result: Any) -> str | None:
        got = torch.stack(list(result)) if isinstance(result, (list, tuple)) else result
        got = got.reshape(-1).cpu()
        if "loop" not in reference:
            reference["loop"] = (x.cpu() ** 2).reshape(-1)
        want = reference["loop"]
        if got.shape != want.shape or not torch.equal(got, want):
            bad = (got != want).nonzero()[:1].tolist() if got.shape == want.shape else "shape"
            return f"differs from the for loop's result (first difference at {bad})"
        return None

    strategies = [
        Strategy("for_loop", for_loop, "Python for loop (one launch per element)"),
        Strategy("vectorized", vectorized, "vectorized: x ** 2 (one launch)"),
        Strategy("vmap", vmapped, "torch.vmap(f)(x)"),
        Strategy(
            "streams",
            streams_step,
            f"chunks on {k} CUDA streams",
            needs_cuda=True,
            setup=streams_setup,
            teardown=st.clear,
            figures={"k": k},
        ),
        Strategy(
            "cuda_graph",
            graph_step,
            "CUDA graph of the for loop (one graph launch)",
            needs_cuda=True,
            setup=graph_setup,
            teardown=graph_teardown,
        ),
        Strategy(
            "dataparallel_function",
            dataparallel_function,
            "nn.DataParallel(function), the tutorial's attempt",
            attempt=True,
            failure_reason=DATAPARALLEL_REASON,
            figures={"note": DATAPARALLEL_REASON} if not ctx.is_cuda else {},
        ),
    ]
    for s in strategies:
        s.repeatable = True  # every step is a function of x alone
    if p["only"] != "all":
        strategies = [s for s in strategies if s.name == p["only"]]
    return Plan(
        strategies=strategies,
        baseline="for_loop",
        check=check,
        figures={"n": n, "dtype": p["dtype"]},
    )
