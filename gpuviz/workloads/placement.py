"""``placement``: what moving data to the GPU costs, by method, memory kind and size.

For each size of the sweep: ``x.to(device)`` and ``x.cuda()`` from pageable memory; from pinned
(page-locked) memory, blocking and ``non_blocking=True``; a pageable ``non_blocking`` copy
(which the driver still stages synchronously); and an ``nn.Module``'s ``.to(device)`` (with its
way back to the CPU, so every step moves the same bytes). Each reports GB/s. ``host_clone`` (a
copy in host memory) is the reference that also runs on the CPU build.
"""

from __future__ import annotations

from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

WORKLOAD = WorkloadSpec(
    name="placement",
    title=".to(device) vs .cuda(), pinned vs pageable, blocking vs non_blocking, over sizes",
    help=(
        "Host-to-device copies of tensors and modules: .to(device) vs .cuda(), pinned vs "
        "pageable memory, blocking vs non_blocking, over a size sweep. Reports GB/s per size."
    ),
    params=(
        Param(
            "sizes_mb",
            "ints",
            [1, 16, 256],
            "the size sweep, in MiB",
            minimum=1,
            maximum=65536,
            min_len=1,
            max_len=16,
        ),
        Param("module", "bool", True, "also move an nn.Module of each size"),
    ),
    entry="gpuviz.workloads.placement:build",
)

METHODS = (
    ("host_clone", "x.clone() in host memory (reference)", False),
    ("to_pageable", "x.to(device), pageable", True),
    ("cuda_pageable", "x.cuda(), pageable", True),
    ("to_pageable_nonblocking", "x.to(device, non_blocking=True), pageable", True),
    ("to_pinned", "x.to(device), pinned", True),
    ("to_pinned_nonblocking", "x.to(device, non_blocking=True), pinned", True),
    ("module_to", "module.to(device) and back .to('cpu')", True),
)


def build(ctx: RunContext) -> Plan:
    """The plan of ``placement`` (see the module docstring)."""
    import torch

    device = ctx.device
    strategies: list[Strategy] = []
    state: dict[str, Any] = {}

    def make(method: str, size_mb: int) -> tuple[Any, Any, Any]:
        nbytes = size_mb * 2**20
        key = f"{method}@{size_mb}MB"

        def setup() -> None:
            if method == "module_to":
                width = 1024
                rows = max(1, nbytes // 4 // width)
                state[key] = torch.nn.Linear(width, rows, bias=False)
            else:
                pin = method.startswith("to_pinned")
                state[key] = torch.ones(nbytes // 4, dtype=torch.float32, pin_memory=pin)

        def step() -> Any:
            x = state[key]
            if method == "host_clone":
                return x.clone()
            if method == "cuda_pageable":
                return x.cuda(device)
            if method == "module_to":
                x.to(device)
                x.to("cpu")
                return None
            return x.to(device, non_blocking=method.endswith("nonblocking"))

        def teardown() -> None:
            state.pop(key, None)

        return setup, step, teardown

    for size_mb in ctx.params["sizes_mb"]:
        for method, title, needs_cuda in METHODS:
            if method == "module_to" and not ctx.params["module"]:
                continue
            setup, step, teardown = make(method, size_mb)
            moved = size_mb * 2**20 * (2 if method == "module_to" else 1)
            strategies.append(
                Strategy(
                    f"{method}@{size_mb}MB",
                    step,
                    f"{title}, {size_mb} MiB",
                    needs_cuda=needs_cuda,
                    setup=setup,
                    teardown=teardown,
                    work=float(moved),
                    work_unit="bytes",
                    figures={"method": method, "size_mb": size_mb},
                    repeatable=True,
                )
            )
    return Plan(strategies=strategies, summarize=_summarize)


def _summarize(result: dict[str, Any]) -> dict[str, Any]:
    table: dict[str, dict[str, float]] = {}
    for r in result["strategies"]:
        if r.get("status") == "ok" and "gb_per_s" in r:
            table.setdefault(str(r["size_mb"]), {})[r["method"]] = r["gb_per_s"]
    return {"gb_per_s_by_size_mb": table}
