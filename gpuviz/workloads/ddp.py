"""``ddp``: DistributedDataParallel, one process per rank, one trace per rank.

Each rank is a process that :mod:`gpuviz.engine.multiprocess` starts through
``torch.multiprocessing`` (spawn): one per GPU of ``--gpus`` with NCCL, or ``cpu_ranks``
processes (default 2) with gloo on ``--device cpu``. In each rank this body builds a plan: the
process group is set up first (so the profiler, started later, writes ``distributedInfo`` into
the rank's trace), then a model wrapped in ``DistributedDataParallel`` trains on random data
with SGD: a step is forward, backward (where DDP all-reduces the gradients, in buckets, while
the backward goes on) and the optimizer step.

The rank and world come from the environment, as ``torchrun`` sets them (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``); the rendezvous is ``GPUVIZ_DIST_INIT`` (a ``file://`` store
that gpuviz's launcher makes) or else ``env://`` (``MASTER_ADDR``/``MASTER_PORT``). Without
any of them the body runs as a world of one.

The model is ``Linear(in_features, out_features)`` (the default, Linear(100, 10)), or with
``hidden`` > 0 an MLP of two hidden layers of that width, whose larger gradients give NCCL
more to do.

Fault injection, for tests of the launcher (a real program's faults look the same to it):
``fail_rank`` raises an exception (or, with ``fail_how=exit``, ends the process at once with
exit code 3) and ``hang_rank`` sleeps forever, at the ``fault_step``-th call of the step
(counting warm-ups, from 0).
"""

from __future__ import annotations

import os
import time
from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

RANK_CHILD_ENV = "GPUVIZ_RANK_CHILD"
"""Set to 1 in ranks that gpuviz's launcher started: the launcher closes the process group."""

_MULTICAST_VARS = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")

WORKLOAD = WorkloadSpec(
    name="ddp",
    title="DistributedDataParallel: one process per GPU (NCCL) or 2 CPU processes (gloo)",
    help=(
        "DistributedDataParallel on Linear(100, 10) (or an MLP), one process per GPU with NCCL, "
        "or 2 processes with gloo on --device cpu. Each rank writes rank-N.json.gz into the "
        "--out folder. Reports per-rank step time, NCCL kernel time and how much of it "
        "overlaps compute."
    ),
    params=(
        Param("in_features", "int", 100, "model inputs", minimum=1, maximum=65536),
        Param("out_features", "int", 10, "model outputs", minimum=1, maximum=65536),
        Param(
            "hidden",
            "int",
            0,
            "0: one Linear; else an MLP of 2 hidden layers this wide",
            minimum=0,
            maximum=65536,
        ),
        Param("batch", "int", 32, "rows per rank per step", minimum=1, maximum=1_000_000),
        Param("cpu_ranks", "int", 2, "processes on --device cpu (gloo)", minimum=1, maximum=16),
        Param(
            "fail_rank", "int", -1, "testing: this rank fails (-1: none)", minimum=-1, maximum=1023
        ),
        Param(
            "fail_how",
            "choice",
            "raise",
            "testing: raise an exception, or exit the process at once (code 3)",
            choices=("raise", "exit"),
        ),
        Param(
            "hang_rank", "int", -1, "testing: this rank hangs (-1: none)", minimum=-1, maximum=1023
        ),
        Param(
            "fault_step",
            "int",
            0,
            "testing: the step call (warm-ups count) of the fault",
            minimum=0,
            maximum=1_000_000,
        ),
    ),
    entry="gpuviz.workloads.ddp:build",
    multi_gpu=True,
    multi_process=True,
)


def _hang_forever() -> None:
    while True:  # an injected hang: the launcher's --rank-timeout must catch it
        time.sleep(1.0)


def build(ctx: RunContext) -> Plan:
    """The plan of one ``ddp`` rank (see the module docstring)."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    p = ctx.params
    cuda = ctx.is_cuda
    device = ctx.device
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    backend = "nccl" if cuda else "gloo"
    created = False
    if not dist.is_initialized():
        init = os.environ.get("GPUVIZ_DIST_INIT")
        if init is None and "MASTER_ADDR" in os.environ:
            init = "env://"
        if init is None:  # a world of one, started by hand
            import tempfile

            init = "file://" + os.path.join(tempfile.mkdtemp(prefix="gpuviz-ddp-"), "store")
        timeout = timedelta(seconds=float(os.environ.get("GPUVIZ_DIST_TIMEOUT_S", "1800")))
        kwargs: dict[str, Any] = {}
        if cuda:
            torch.cuda.set_device(device)
            kwargs["device_id"] = device  # eager NCCL init, bound to this rank's GPU
        dist.init_process_group(
            backend, init_method=init, rank=rank, world_size=world, timeout=timeout, **kwargs
        )
        created = True
    state: dict[str, Any] = {"calls": 0}

    def setup() -> None:
        torch.manual_seed(0)  # the same initial weights on every rank (DDP broadcasts anyway)
        nn = torch.nn
        model: Any
        if p["hidden"] > 0:
            h = p["hidden"]
            model = nn.Sequential(
                nn.Linear(p["in_features"], h),
                nn.ReLU(),
                nn.Linear(h, h),
                nn.ReLU(),
                nn.Linear(h, p["out_features"]),
            )
        else:
            model = nn.Linear(p["in_features"], p["out_features"])
        model = model.to(device)
        ddp = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if cuda else None
        )
        g = torch.Generator().manual_seed(1000 + rank)  # each rank its own data
        state["model"] = ddp
        state["opt"] = torch.optim.SGD(ddp.parameters(), lr=1e-3)
        state["x"] = torch.randn(p["batch"], p["in_features"], generator=g).to(device)
        state["y"] = torch.randn(p["batch"], p["out_features"], generator=g).to(device)

    def step() -> Any:
        k = state["calls"]
        state["calls"] += 1
        if k == p["fault_step"]:
            if rank == p["fail_rank"]:
                if p["fail_how"] == "exit":
                    os._exit(3)
                raise RuntimeError(f"injected failure on rank {rank} (step call {k})")
            if rank == p["hang_rank"]:
                _hang_forever()
        model, opt = state["model"], state["opt"]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(state["x"]), state["y"])
        loss.backward()
        opt.step()
        return loss.detach()

    def teardown() -> None:
        state.pop("model", None)
        state.pop("opt", None)

    def plan_teardown() -> None:
        # gpuviz's launcher closes the group itself, after the rank's last event: a rank that
        # failed must report before its peers see the group go and fail in turn.
        if created and os.environ.get(RANK_CHILD_ENV) != "1" and dist.is_initialized():
            dist.destroy_process_group()

    def check(_name: str, loss: Any) -> str | None:
        value = float(loss)
        return None if value == value else "loss is NaN"

    return Plan(
        strategies=[
            Strategy(
                "ddp",
                step,
                f"DDP {backend}, rank {rank} of {world}",
                setup=setup,
                teardown=teardown,
                work=float(p["batch"]),
                work_unit="items",
            )
        ],
        check=check,
        warmup_steps=2,
        profile_steps=2,
        teardown=plan_teardown,
        figures={
            "rank": rank,
            "world_size": world,
            "backend": backend,
            # What this rank ran with: multicast must stay off on shared multi-GPU machines.
            "env": {k: os.environ.get(k) for k in _MULTICAST_VARS},
        },
    )


__all__ = ["RANK_CHILD_ENV", "WORKLOAD", "build"]
