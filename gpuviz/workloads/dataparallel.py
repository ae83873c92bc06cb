"""``dataparallel``: the DataParallel tutorial, with each replica's rows and time, and the cost
of the split.

The tutorial's setup by default: ``RandomDataset(input_size=5, length=100)``, the model
``Linear(5, 2)``, batch 30, wrapped in ``nn.DataParallel`` over the GPUs that ``--gpus`` picks
(default: all). A step is one batch: the tutorial's ``input = data.to(device)`` then
``output = model(input)`` (and, with ``mode=forward_backward``, a backward pass). The plan's
warm-ups and profiled steps are one epoch each (with the defaults 4 batches: 30, 30, 30, 10),
so the trace holds exactly one epoch; timed steps go on through the epoch in the same order.

What a step records (nothing is estimated):

- per replica (``SplitRecorded``): its device, the rows it received (the dim 0 of the input
  its forward got, read in a forward pre-hook, which DataParallel's replicas share) and its GPU
  time (two CUDA events recorded on that device's stream around the replica's forward, in
  DataParallel's worker thread). A GPU of the set that gets no chunk is reported with 0 rows.
- what DataParallel spends on ``scatter``, ``replicate``, ``parallel_apply`` and ``gather``:
  ``nn.DataParallel.forward`` is run as it is, and a subclass times each of the pieces it calls
  (its own ``scatter``/``replicate``/``parallel_apply``/``gather`` methods) with
  ``perf_counter`` between synchronizations of every GPU of the set. The synchronizations make
  each phase's figure whole, and add a few tens of µs to a step.

On the CPU, or where torch sees no GPU, ``nn.DataParallel`` just calls its module; with one
GPU it scatters to that GPU and calls its module there (no replicas). The result says so, and
gives the split that DataParallel would make on ``plan_gpus`` GPUs
(:func:`gpuviz.analysis.split_plan.plan_split`, the arithmetic of ``Tensor.chunk``).

The baseline strategy ``one_device`` runs the same model on the first device, without
DataParallel, so ``speedup`` says what the split buys (with the tutorial's model: nothing).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

PHASES = ("scatter", "replicate", "parallel_apply", "gather")
"""The pieces of ``DataParallel.forward`` that are timed, in the order it calls them."""


def _epoch_batches(params: Mapping[str, Any]) -> int:
    # A step is one batch, and a run is one epoch by default (DESIGN.md): 100 rows in
    # batches of 30 are 4 steps (30, 30, 30, 10).
    return -(-int(params["length"]) // int(params["batch"]))


WORKLOAD = WorkloadSpec(
    name="dataparallel",
    default_steps=_epoch_batches,
    title="DataParallel: how a batch is split over GPUs, and what the split costs",
    help=(
        "The DataParallel tutorial (RandomDataset, Linear(5, 2), batch 30) on the GPUs that "
        "--gpus picks. Per batch and per replica: device, rows and GPU time; plus the time "
        "DataParallel spends on scatter, replicate, parallel_apply and gather. On the CPU or "
        "one GPU, DataParallel just runs its module; the planned split is given for plan_gpus."
    ),
    params=(
        Param(
            "input_size",
            "int",
            5,
            "features per sample (cnn: image side)",
            minimum=1,
            maximum=65536,
        ),
        Param("output_size", "int", 2, "model outputs per sample", minimum=1, maximum=65536),
        Param("length", "int", 100, "samples in the RandomDataset", minimum=1, maximum=10_000_000),
        Param("batch", "int", 30, "batch size", minimum=1, maximum=1_000_000),
        Param(
            "model",
            "choice",
            "linear",
            "linear: the tutorial's Linear; mlp: 3 Linear layers of `hidden`; cnn: a small CNN "
            "on 3 x input_size x input_size images",
            choices=("linear", "mlp", "cnn"),
        ),
        Param("hidden", "int", 4096, "mlp width / cnn channels x 64", minimum=1, maximum=65536),
        Param(
            "mode",
            "choice",
            "forward",
            "forward only (the tutorial), or forward and backward",
            choices=("forward", "forward_backward"),
        ),
        Param(
            "plan_gpus",
            "int",
            0,
            "GPU count for the planned split (0: the GPUs of the run, or 8 without two)",
            minimum=0,
            maximum=1024,
        ),
    ),
    entry="gpuviz.workloads.dataparallel:build",
    multi_gpu=True,
)


def epoch_batches(length: int, batch: int) -> list[int]:
    """The batch sizes of one epoch of a DataLoader without ``drop_last``.

    >>> epoch_batches(100, 30)
    [30, 30, 30, 10]
    """
    full, rest = divmod(length, batch)
    return [batch] * full + ([rest] if rest else [])


def build(ctx: RunContext) -> Plan:
    """The plan of ``dataparallel`` (see the module docstring)."""
    import torch

    from gpuviz.analysis.split_plan import plan_split

    p = ctx.params
    cuda = ctx.is_cuda
    devices = list(ctx.devices) if cuda else [ctx.device]
    device_ids = [d.index if d.index is not None else 0 for d in devices] if cuda else []
    sizes = epoch_batches(p["length"], p["batch"])
    n_batches = len(sizes)
    plan_gpus = p["plan_gpus"] or (len(device_ids) if len(device_ids) >= 2 else 8)
    backward = p["mode"] == "forward_backward"
    state: dict[str, Any] = {}
    records: list[dict[str, Any]] = []  # one per non-warm-up step of the dataparallel strategy
    calls = {"dataparallel": 0, "one_device": 0}

    def sync() -> None:
        for i in device_ids:
            torch.cuda.synchronize(i)

    # -- data and model ---------------------------------------------------------------------
    def make_batches() -> list[Any]:
        # The tutorial's RandomDataset and DataLoader(shuffle=True), seeded; kept on the host
        # as the DataLoader yields them, so each step copies its batch like the tutorial does.
        g = torch.Generator().manual_seed(0)
        if p["model"] == "cnn":
            data = torch.randn(p["length"], 3, p["input_size"], p["input_size"], generator=g)
        else:
            data = torch.randn(p["length"], p["input_size"], generator=g)
        loader: Any = torch.utils.data.DataLoader(
            data,  # type: ignore[arg-type]  # a tensor is a map-style dataset of its rows
            batch_size=p["batch"],
            shuffle=True,
            generator=torch.Generator().manual_seed(1),
        )
        return list(loader)

    def make_model() -> Any:
        torch.manual_seed(0)
        nn = torch.nn
        if p["model"] == "mlp":
            h = p["hidden"]
            return nn.Sequential(
                nn.Linear(p["input_size"], h),
                nn.ReLU(),
                nn.Linear(h, h),
                nn.ReLU(),
                nn.Linear(h, p["output_size"]),
            )
        if p["model"] == "cnn":
            c = max(8, p["hidden"] // 64)
            return nn.Sequential(
                nn.Conv2d(3, c, 3, padding=1),
                nn.ReLU(),
                nn.Conv2d(c, 2 * c, 3, padding=1),
                nn.ReLU(),
                nn.AdaptiveAvgPool2d(1),
                nn.Flatten(),
                nn.Linear(2 * c, p["output_size"]),
            )
        return nn.Linear(p["input_size"], p["output_size"])

    # -- per-replica timing: hooks that DataParallel's replicas share --------------------------
    seen: dict[str, dict[str, Any]] = {}

    def pre_hook(_module: Any, inputs: tuple[Any, ...]) -> None:
        x = inputs[0]
        key = str(x.device)
        entry: dict[str, Any] = {"rows": int(x.shape[0])}
        if x.device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            start.record(torch.cuda.current_stream(x.device))
            entry["start"] = start
        else:
            entry["t0"] = time.perf_counter()
        seen[key] = entry  # one replica per device: no two threads share a key

    def post_hook(_module: Any, inputs: tuple[Any, ...], _output: Any) -> None:
        x = inputs[0]
        entry = seen.get(str(x.device))
        if entry is None:
            return
        if "start" in entry:
            end = torch.cuda.Event(enable_timing=True)
            end.record(torch.cuda.current_stream(x.device))
            entry["end"] = end
        else:
            entry["ms"] = (time.perf_counter() - entry["t0"]) * 1e3

    def make_dp(module: Any) -> Any:
        DataParallel = torch.nn.DataParallel
        phase_ms: dict[str, float] = {}

        class TimedDataParallel(DataParallel):  # type: ignore[misc, valid-type]
            """DataParallel whose forward times the pieces it calls (see the module docstring)."""

            def _timed(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
                sync()
                t0 = time.perf_counter()
                out = fn(*args)
                sync()
                phase_ms[name] = (time.perf_counter() - t0) * 1e3
                return out

            def scatter(self, *args: Any) -> Any:
                return self._timed("scatter", super().scatter, *args)

            def replicate(self, *args: Any) -> Any:
                return self._timed("replicate", super().replicate, *args)

            def parallel_apply(self, *args: Any) -> Any:
                return self._timed("parallel_apply", super().parallel_apply, *args)

            def gather(self, *args: Any) -> Any:
                return self._timed("gather", super().gather, *args)

        if device_ids:
            dp = TimedDataParallel(module, device_ids=device_ids)
        elif torch.cuda.is_available():
            # --device cpu on a machine with GPUs: DataParallel(module) would scatter to them.
            # Build it as DataParallel builds itself where torch finds no GPU: no device ids,
            # so its forward calls the module directly.
            dp = TimedDataParallel.__new__(TimedDataParallel)
            torch.nn.Module.__init__(dp)
            dp.module = module
            dp.device_ids = []
        else:
            dp = TimedDataParallel(module)
        state["phase_ms"] = phase_ms
        return dp

    # -- strategies ---------------------------------------------------------------------------
    def setup_dp() -> None:
        module = make_model().to(devices[0])
        state["hooks"] = [
            module.register_forward_pre_hook(pre_hook),
            module.register_forward_hook(post_hook),
        ]
        state["dp"] = make_dp(module)
        state["batches"] = make_batches()

    def step_dp() -> Any:
        i = calls["dataparallel"]
        calls["dataparallel"] += 1
        warm = i < n_batches  # the plan's warm-ups are the first epoch
        batch = state["batches"][i % n_batches]
        dp = state["dp"]
        seen.clear()
        phase_ms = state["phase_ms"]
        phase_ms.clear()
        if backward:
            dp.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        x = batch.to(devices[0])  # the tutorial's input.to(device)
        out = dp(x)
        bwd_ms = None
        if backward:
            loss = out.float().pow(2).mean()
            if cuda:
                sync()
            tb = time.perf_counter()
            loss.backward()
            if cuda:
                sync()
            bwd_ms = (time.perf_counter() - tb) * 1e3
        if cuda:
            sync()
        step_ms = (time.perf_counter() - t0) * 1e3
        if not warm:
            records.append(_record(batch, out, phase_ms, bwd_ms, step_ms))
        return out

    def _record(
        batch: Any, out: Any, phase_ms: dict[str, float], bwd_ms: float | None, step_ms: float
    ) -> dict[str, Any]:
        rows_of: list[int] = []
        gpu_of: list[float | None] = []
        names = [str(d) for d in devices]
        for name in names:
            e = seen.get(name)
            rows_of.append(0 if e is None else e["rows"])
            if e is None:
                gpu_of.append(None)
            elif "end" in e:
                gpu_of.append(float(e["start"].elapsed_time(e["end"])))
            else:
                gpu_of.append(None)  # CPU: no GPU time (host time is in replica_host_ms)
        for r, (name, rows, gpu) in enumerate(zip(names, rows_of, gpu_of)):
            ctx.split(r, name, rows, gpu)
        rec: dict[str, Any] = {
            "batch": int(batch.shape[0]),
            "devices": names,
            "rows": rows_of,
            "replica_gpu_ms": gpu_of,
            "planned_rows": plan_split(int(batch.shape[0]), plan_gpus),
            "output_rows": int(out.shape[0]),
            "step_ms": step_ms,
        }
        host = [seen[n]["ms"] for n in names if n in seen and "ms" in seen[n]]
        if host:
            rec["replica_host_ms"] = host
        for ph in PHASES:
            if ph in phase_ms:
                rec[f"{ph}_ms"] = phase_ms[ph]
        if bwd_ms is not None:
            rec["backward_ms"] = bwd_ms
        return rec

    def teardown_dp() -> None:
        for h in state.pop("hooks", []):
            h.remove()
        state.pop("dp", None)

    def setup_one() -> None:
        state["one"] = make_model().to(devices[0])
        state.setdefault("batches", make_batches())

    def step_one() -> Any:
        i = calls["one_device"]
        calls["one_device"] += 1
        model = state["one"]
        if backward:
            model.zero_grad(set_to_none=True)
        out = model(state["batches"][i % n_batches].to(devices[0]))
        if backward:
            out.float().pow(2).mean().backward()
        return out

    def teardown_one() -> None:
        state.pop("one", None)

    dp_strategy = Strategy(
        "dataparallel",
        step_dp,
        f"nn.DataParallel over {len(device_ids)} GPUs"
        if len(device_ids) >= 2
        else "nn.DataParallel (runs its module directly)",
        setup=setup_dp,
        teardown=teardown_dp,
    )
    strategies = [dp_strategy]
    if len(device_ids) >= 2:
        strategies.append(
            Strategy(
                "one_device",
                step_one,
                f"the same model on {devices[0]}, no DataParallel",
                setup=setup_one,
                teardown=teardown_one,
            )
        )

    def check(_name: str, out: Any) -> str | None:
        # Every strategy must give one output row per input row, of the model's width.
        if out.shape[-1] != p["output_size"]:
            return f"output width {out.shape[-1]}, expected {p['output_size']}"
        return None

    def summarize(result: dict[str, Any]) -> dict[str, Any]:
        return {"dataparallel": _summary(result, records, p, devices, device_ids, plan_gpus, sizes)}

    def plan_teardown() -> None:
        state.clear()
        seen.clear()

    return Plan(
        strategies=strategies,
        baseline="one_device" if len(strategies) > 1 else None,
        check=check,
        warmup_steps=n_batches,
        profile_steps=n_batches,
        summarize=summarize,
        teardown=plan_teardown,
    )


def _summary(
    result: dict[str, Any],
    records: list[dict[str, Any]],
    p: dict[str, Any],
    devices: list[Any],
    device_ids: list[int],
    plan_gpus: int,
    sizes: list[int],
) -> dict[str, Any]:
    """The ``dataparallel`` section of the result: the split, step by step, and its costs."""
    from gpuviz.analysis.split_plan import plan_split

    steps = [s for s in result.get("steps", []) if s.get("label") == "dataparallel"]
    per_step = []
    for log, rec in zip(steps, records):
        per_step.append({"step": log["step"], "profiled": log["profiled"], **rec})
    timed = [r for r in per_step if not r["profiled"]] or per_step
    n = len(device_ids)
    if n >= 2:
        behaviour = (
            f"DataParallel scatters each batch over {n} GPUs with Tensor.chunk on dim 0, "
            "replicates the model on each, runs the replicas in threads and gathers the outputs "
            f"on {devices[0]}."
        )
    elif n == 1:
        behaviour = (
            "One GPU: DataParallel scatters the batch to it and runs its module there; there is "
            "nothing to replicate or gather. The planned split below is what "
            f"{plan_gpus} GPUs would get."
        )
    else:
        behaviour = (
            "No GPU: DataParallel just runs its module on the CPU (it has no device ids). The "
            f"planned split below is what {plan_gpus} GPUs would get."
        )
    out: dict[str, Any] = {
        "gpus": n,
        "devices": [str(d) for d in devices],
        "runs_module_directly": n < 2,
        "behaviour": behaviour,
        "model": p["model"],
        "mode": p["mode"],
        "epoch_batches": sizes,
        "planned_split": {
            "gpus": plan_gpus,
            "rows": [plan_split(b, plan_gpus) for b in sizes],
        },
        "steps": per_step,
    }
    phases = {}
    for ph in (*PHASES, "backward"):
        vals = [r[f"{ph}_ms"] for r in timed if f"{ph}_ms" in r]
        if vals:
            phases[ph] = {"median_ms": statistics.median(vals), "min_ms": min(vals)}
    if phases:
        out["phases"] = phases
    replicas = []
    for i, name in enumerate(str(d) for d in devices):
        gpu = [r["replica_gpu_ms"][i] for r in timed if r["replica_gpu_ms"][i] is not None]
        entry: dict[str, Any] = {
            "replica": i,
            "device": name,
            "rows": [r["rows"][i] for r in per_step[: len(sizes)]],
        }
        if gpu:
            entry["median_gpu_ms"] = statistics.median(gpu)
        host = [r["replica_host_ms"][i] for r in timed if "replica_host_ms" in r]
        if host and not gpu:
            entry["median_host_ms"] = statistics.median(host)
        replicas.append(entry)
    out["replicas"] = replicas
    if n >= 2 and per_step:
        # What DataParallel did against Tensor.chunk's arithmetic, step by step.
        out["matches_plan"] = all(r["rows"] == plan_split(r["batch"], n) for r in per_step)
    return out


__all__ = ["PHASES", "WORKLOAD", "build", "epoch_batches"]
