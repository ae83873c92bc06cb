"""``streams``: do CUDA streams really overlap? Does a copy hide behind compute?

K streams × M matmuls of S×S, plus a host-to-device copy of B MB (pinned or pageable). The
``default_stream`` strategy runs everything in order on the default stream; ``multi_stream``
spreads the matmuls over K streams and issues the copy on its own stream. The trace tells how
much really overlapped: ``compute_copy_us`` (a kernel and a copy at once) and
``multi_stream_us`` (kernels of two or more streams at once). A pageable copy cannot overlap:
the driver stages it through a pinned buffer, synchronously for the host.
"""

from __future__ import annotations

from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

WORKLOAD = WorkloadSpec(
    name="streams",
    title="K streams × M matmuls and an H2D copy, vs all on the default stream",
    help=(
        "K CUDA streams each run M matmuls of size S, while a copy of B MB goes host to device "
        "(pinned or pageable). Compared with everything on the default stream; the overlap "
        "(compute with copy, kernel with kernel) is measured from the trace."
    ),
    params=(
        Param("streams", "int", 2, "K: CUDA streams", minimum=1, maximum=32),
        Param("matmuls", "int", 4, "M: matmuls per stream", minimum=1, maximum=1000),
        Param("size", "int", 4096, "S: the matrices are S×S", minimum=1, maximum=32768),
        Param(
            "copy_mb",
            "int",
            256,
            "B: MB copied host to device (0: no copy)",
            minimum=0,
            maximum=65536,
        ),
        Param("pinned", "bool", True, "copy from pinned (page-locked) host memory"),
        Param(
            "dtype", "choice", "float32", "matrix type", choices=("float32", "bfloat16", "float16")
        ),
    ),
    entry="gpuviz.workloads.streams:build",
)


def build(ctx: RunContext) -> Plan:
    """The plan of ``streams`` (see the module docstring)."""
    import torch

    p = ctx.params
    device = ctx.device
    k, m, s = p["streams"], p["matmuls"], p["size"]
    dtype = getattr(torch, p["dtype"])
    if not ctx.is_cuda and dtype != torch.float32:
        dtype = torch.float32  # half types are slow or missing for CPU matmul
    state: dict[str, Any] = {}
    copy_bytes = p["copy_mb"] * 2**20

    def setup() -> None:
        g = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(s, s, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
        state["a"] = a
        state["b"] = [
            torch.randn(s, s, generator=g).to(device=device, dtype=dtype) for _ in range(k)
        ]
        state["c"] = [torch.empty(s, s, device=device, dtype=dtype) for _ in range(k)]
        if copy_bytes:
            pin = p["pinned"] and ctx.is_cuda
            state["host"] = torch.ones(copy_bytes // 4, dtype=torch.float32, pin_memory=pin)
            state["dev"] = torch.empty(copy_bytes // 4, dtype=torch.float32, device=device)
        if ctx.is_cuda:
            state["streams"] = [torch.cuda.Stream(device=device) for _ in range(k)]
            state["copy_stream"] = torch.cuda.Stream(device=device)

    def default_stream() -> Any:
        if copy_bytes:
            state["dev"].copy_(state["host"], non_blocking=p["pinned"])
        for i in range(k):
            for _ in range(m):
                torch.matmul(state["a"], state["b"][i], out=state["c"][i])
        return [c[0, :4].clone() for c in state["c"]]

    def multi_stream() -> Any:
        main = torch.cuda.current_stream(device)
        if copy_bytes:
            cs = state["copy_stream"]
            cs.wait_stream(main)
            with torch.cuda.stream(cs):
                state["dev"].copy_(state["host"], non_blocking=p["pinned"])
        for i, st in enumerate(state["streams"]):
            st.wait_stream(main)
            with torch.cuda.stream(st):
                for _ in range(m):
                    torch.matmul(state["a"], state["b"][i], out=state["c"][i])
        for st in state["streams"]:
            main.wait_stream(st)
        if copy_bytes:
            main.wait_stream(state["copy_stream"])
        return [c[0, :4].clone() for c in state["c"]]

    ref: dict[str, Any] = {}

    def check(name: str, result: Any) -> str | None:
        got = torch.stack(result).float().cpu()
        if "want" not in ref:
            ref["want"] = got
            return None
        if not torch.allclose(got, ref["want"], rtol=1e-2, atol=1e-2):
            return "the matmul results differ from the default stream's"
        return None

    flops = 2.0 * s * s * s * k * m
    return Plan(
        strategies=[
            Strategy(
                "default_stream",
                default_stream,
                "all on the default stream",
                work=flops,
                work_unit="flop",
                repeatable=True,
            ),
            Strategy(
                "multi_stream",
                multi_stream,
                f"{k} streams + a copy stream",
                needs_cuda=True,
                work=flops,
                work_unit="flop",
                repeatable=True,
            ),
        ],
        baseline="default_stream",
        check=check,
        setup=setup,
        teardown=state.clear,
        figures={"copy_bytes": copy_bytes, "pinned": bool(p["pinned"])},
        summarize=_summarize,
    )


def _summarize(result: dict[str, Any]) -> dict[str, Any]:
    rows = {r["name"]: r for r in result["strategies"]}
    out: dict[str, Any] = {}
    multi = rows.get("multi_stream", {})
    if multi.get("status") == "ok":
        out["overlap"] = {
            "compute_copy_us": multi.get("compute_copy_us"),
            "multi_stream_us": multi.get("multi_stream_us"),
            "speedup": multi.get("speedup"),
        }
    return out
