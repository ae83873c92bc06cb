"""``training``: a small model's training loop in fp32 and in AMP (bf16).

An MLP (``layers`` Linear+ReLU blocks of ``hidden`` units) on random data, cross-entropy loss,
SGD with momentum. One step is forward, backward and the optimizer step for one batch. Reports
step time, throughput (samples/s) and, on CUDA, the peak allocated memory of a step.
``amp_bf16`` uses ``torch.autocast`` with bfloat16 (on the CPU too).
"""

from __future__ import annotations

from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

WORKLOAD = WorkloadSpec(
    name="training",
    title="A small training loop: fp32 vs AMP (bf16)",
    help=(
        "An MLP trained on random data with a chosen batch size, in fp32 and with AMP (bf16). "
        "Reports step time, throughput and peak memory."
    ),
    params=(
        Param("batch", "int", 256, "samples per step", minimum=1, maximum=1_000_000),
        Param("features", "int", 1024, "input features", minimum=1, maximum=65536),
        Param("hidden", "int", 4096, "hidden units per layer", minimum=1, maximum=65536),
        Param("layers", "int", 4, "hidden layers", minimum=1, maximum=64),
        Param("classes", "int", 10, "output classes", minimum=2, maximum=100000),
        Param(
            "precision",
            "choice",
            "both",
            "which precisions to run",
            choices=("both", "fp32", "amp_bf16"),
        ),
    ),
    entry="gpuviz.workloads.training:build",
)


def build(ctx: RunContext) -> Plan:
    """The plan of ``training`` (see the module docstring)."""
    import torch

    p = ctx.params
    device = ctx.device
    state: dict[str, dict[str, Any]] = {}

    def make(name: str, amp: bool) -> Strategy:
        def setup() -> None:
            torch.manual_seed(0)
            blocks: list[Any] = []
            width = p["features"]
            for _ in range(p["layers"]):
                blocks += [torch.nn.Linear(width, p["hidden"]), torch.nn.ReLU()]
                width = p["hidden"]
            blocks.append(torch.nn.Linear(width, p["classes"]))
            model = torch.nn.Sequential(*blocks).to(device)
            g = torch.Generator(device="cpu").manual_seed(1)
            state[name] = {
                "model": model,
                "opt": torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9),
                "x": torch.randn(p["batch"], p["features"], generator=g).to(device),
                "y": torch.randint(0, p["classes"], (p["batch"],), generator=g).to(device),
            }

        def step() -> Any:
            s = state[name]
            if ctx.is_cuda:
                torch.cuda.reset_peak_memory_stats(device)
            s["opt"].zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                loss = torch.nn.functional.cross_entropy(s["model"](s["x"]), s["y"])
            loss.backward()
            s["opt"].step()
            if ctx.is_cuda:
                ctx.report(
                    name, "peak_allocated_bytes", int(torch.cuda.max_memory_allocated(device))
                )
            return loss.detach()

        def teardown() -> None:
            state.pop(name, None)

        title = "AMP (bf16 autocast)" if amp else "fp32"
        return Strategy(
            name,
            step,
            title,
            setup=setup,
            teardown=teardown,
            work=float(p["batch"]),
            work_unit="items",
        )

    strategies = []
    if p["precision"] in ("both", "fp32"):
        strategies.append(make("fp32", False))
    if p["precision"] in ("both", "amp_bf16"):
        strategies.append(make("amp_bf16", True))

    def check(name: str, loss: Any) -> str | None:
        value = float(loss)
        return None if value == value and value < 1e6 else f"loss is {value}"

    return Plan(
        strategies=strategies,
        baseline="fp32" if p["precision"] == "both" else None,
        check=check,
        summarize=_summarize,
    )


def _summarize(result: dict[str, Any]) -> dict[str, Any]:
    for r in result["strategies"]:
        if "items_per_s" in r:
            r["samples_per_s"] = r.pop("items_per_s")
    return {}
