"""``model_parallel``: a Sequential cut across GPUs, with optional micro-batches (a pipeline).

The model is ``layers`` blocks of ``Linear(width, width) + ReLU``, in one ``nn.Sequential``.
It is cut at layer boundaries into stages (``cuts``: the block indices where a new stage
begins; default: equal stages, one per GPU of ``--gpus``, or 2 stages on the CPU or one GPU).
Stage ``i`` lives on GPU ``i mod n``. A step is one batch, forward only (or with
``backward=true`` forward and backward).

Strategies:

- ``one_device``: the whole Sequential on the first device: the baseline.
- ``split``: the cut model, the batch going through the stages in turn (naive model
  parallelism: one GPU works at a time).
- ``pipeline`` (when ``micro_batches`` > 1): the batch in micro-batches, issued in wavefront
  order (GPipe's forward schedule) so that stage ``i`` works on micro-batch ``j`` while stage
  ``i+1`` works on ``j-1``. Within a wavefront the later stages are issued first: a copy to the
  next GPU runs on the source GPU's stream, so it must be queued before that GPU's next
  micro-batch.

Recorded for each cut strategy: which layers live on which device, each stage's time (the sum
over micro-batches of CUDA-event time on its device, around the stage's work after its input
has arrived), and the bubble: per device, the share of the step (its wall time between
synchronizations) in which the device did none of its stages' work; with ``p`` stages and
``m`` micro-batches GPipe's ideal is ``(p - 1) / (m + p - 1)`` when the stages are equal.
On the CPU, or one GPU, the stages run in turn, and the stage times come from ``perf_counter``
(CPU) or CUDA events (one GPU).
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

from gpuviz.workloads.base import Plan, RunContext, Strategy
from gpuviz.workloads.params import Param
from gpuviz.workloads.registry import WorkloadSpec

WORKLOAD = WorkloadSpec(
    name="model_parallel",
    title="Model parallel: a Sequential cut across GPUs, stage times and the bubble",
    help=(
        "A Sequential of Linear+ReLU blocks cut into stages at chosen layer boundaries, one "
        "stage per GPU, optionally pipelined in micro-batches. Shows which layers live where, "
        "each stage's time and the idle bubble. On one device or the CPU the stages run in turn."
    ),
    params=(
        Param("layers", "int", 8, "Linear+ReLU blocks", minimum=2, maximum=256),
        Param("width", "int", 2048, "features of every layer", minimum=1, maximum=32768),
        Param("batch", "int", 1024, "rows per step", minimum=1, maximum=1_000_000),
        Param(
            "cuts",
            "ints",
            [],
            "block indices where a new stage begins (empty: equal stages, one per GPU)",
            minimum=1,
            maximum=255,
            max_len=255,
        ),
        Param(
            "micro_batches",
            "int",
            4,
            "micro-batches of the pipeline (1: no pipeline)",
            minimum=1,
            maximum=1024,
        ),
        Param("backward", "bool", False, "run backward too (after all micro-batches' forward)"),
    ),
    entry="gpuviz.workloads.model_parallel:build",
    multi_gpu=True,
)


def stage_bounds(layers: int, cuts: list[int], stages: int) -> list[tuple[int, int]]:
    """``[start, end)`` block ranges of each stage.

    ``cuts`` are the blocks where a new stage begins; without them, ``stages`` near-equal
    stages (the first ones get the extra block).

    >>> stage_bounds(8, [], 2)
    [(0, 4), (4, 8)]
    >>> stage_bounds(8, [3, 5], 0)
    [(0, 3), (3, 5), (5, 8)]
    """
    if cuts:
        edges = [0, *sorted(set(cuts)), layers]
    else:
        stages = max(1, min(stages, layers))
        size, extra = divmod(layers, stages)
        edges = [0]
        for i in range(stages):
            edges.append(edges[-1] + size + (1 if i < extra else 0))
    return list(itertools.pairwise(edges))


def wavefront(stages: int, micro_batches: int) -> list[tuple[int, int]]:
    """The order in which ``(stage, micro_batch)`` pairs are issued: GPipe's forward schedule,
    later stages first within a wavefront.

    >>> wavefront(2, 2)
    [(0, 0), (1, 0), (0, 1), (1, 1)]
    """
    order = []
    for t in range(stages + micro_batches - 1):
        for s in reversed(range(stages)):
            j = t - s
            if 0 <= j < micro_batches:
                order.append((s, j))
    return order


def build(ctx: RunContext) -> Plan:
    """The plan of ``model_parallel`` (see the module docstring)."""
    import torch

    from gpuviz.errors import BadInputError

    p = ctx.params
    cuda = ctx.is_cuda
    devices = list(ctx.devices) if cuda else [ctx.device]
    layers = p["layers"]
    cuts = list(p["cuts"])
    if any(c >= layers for c in cuts):
        raise BadInputError(f"-p cuts={cuts}: every cut must be below layers={layers}")
    bounds = stage_bounds(layers, cuts, len(devices) if len(devices) >= 2 else 2)
    n_stages = len(bounds)
    stage_dev = [devices[i % len(devices)] for i in range(n_stages)]
    m = p["micro_batches"]
    if m > p["batch"]:
        raise BadInputError(f"-p micro_batches={m}: more than batch={p['batch']} rows")
    state: dict[str, Any] = {}
    gpu_ids = sorted({d.index for d in devices}) if cuda else []

    def sync() -> None:
        for i in gpu_ids:
            torch.cuda.synchronize(i)

    def make_blocks() -> list[Any]:
        torch.manual_seed(0)
        nn = torch.nn
        return [nn.Sequential(nn.Linear(p["width"], p["width"]), nn.ReLU()) for _ in range(layers)]

    def make_input() -> Any:
        # The batch starts on the first device, as a loader would leave it: a pageable host
        # copy inside the step would block the host and serialize the pipeline.
        g = torch.Generator().manual_seed(1)
        return torch.randn(p["batch"], p["width"], generator=g).to(devices[0])

    def setup_one() -> None:
        state["one"] = torch.nn.Sequential(*make_blocks()).to(devices[0])
        state.setdefault("x", make_input())

    def step_one() -> Any:
        model = state["one"]
        if p["backward"]:
            model.zero_grad(set_to_none=True)
        out = model(state["x"].to(devices[0]))
        if p["backward"]:
            out.float().pow(2).mean().backward()
        return out

    def make_cut(name: str, micro: int) -> Strategy:
        records: list[dict[str, Any]] = []

        def setup() -> None:
            blocks = make_blocks()
            stages = [
                torch.nn.Sequential(*blocks[a:b]).to(d) for (a, b), d in zip(bounds, stage_dev)
            ]
            state[name] = stages
            state.setdefault("x", make_input())

        def step() -> Any:
            stages = state[name]
            if p["backward"]:
                for s in stages:
                    s.zero_grad(set_to_none=True)
            chunks = list(state["x"].chunk(micro))
            acts: dict[tuple[int, int], Any] = {}
            marks: list[tuple[int, int, Any, Any]] = []  # stage, micro-batch, start, end
            a: Any
            b: Any
            if cuda:
                sync()
            t0 = time.perf_counter()
            for s, j in wavefront(n_stages, len(chunks)):
                dev = stage_dev[s]
                inp = chunks[j] if s == 0 else acts.pop((s - 1, j))
                with torch.profiler.record_function(f"stage{s} mb{j} on {dev}"):
                    x = inp.to(dev)
                    if cuda:
                        stream = torch.cuda.current_stream(dev)
                        a = torch.cuda.Event(enable_timing=True)
                        b = torch.cuda.Event(enable_timing=True)
                        a.record(stream)
                        acts[(s, j)] = stages[s](x)
                        b.record(stream)
                    else:
                        a = time.perf_counter()
                        acts[(s, j)] = stages[s](x)
                        b = time.perf_counter()
                marks.append((s, j, a, b))
            out = torch.cat([acts[(n_stages - 1, j)] for j in range(len(chunks))])
            if p["backward"]:
                out.float().pow(2).mean().backward()
            if cuda:
                sync()
            wall_ms = (time.perf_counter() - t0) * 1e3
            stage_ms = [0.0] * n_stages
            for s, _j, a, b in marks:
                stage_ms[s] += float(a.elapsed_time(b)) if cuda else (b - a) * 1e3
            records.append({"wall_ms": wall_ms, "stage_ms": stage_ms})
            return out

        def teardown() -> None:
            state.pop(name, None)

        def figures() -> dict[str, Any]:
            if not records:
                return {}
            # The last --steps records are the timed, unprofiled steps (the profiler distorts).
            use = records[-ctx.steps :]
            stage_ms = [statistics.median(r["stage_ms"][s] for r in use) for s in range(n_stages)]
            wall = statistics.median(r["wall_ms"] for r in use)
            per_dev: dict[str, float] = {}
            for s, d in enumerate(stage_dev):
                per_dev[str(d)] = per_dev.get(str(d), 0.0) + stage_ms[s]
            out: dict[str, Any] = {
                "micro_batches": micro,
                "stage_ms": stage_ms,
                "step_wall_ms": wall,
                "busy_ms": per_dev,
                "stage_time_source": "cuda_events" if cuda else "perf_counter",
            }
            if wall > 0 and len(per_dev) >= 2:
                # The bubble: the share of the step in which a device has none of its work.
                out["bubble"] = {d: max(0.0, 1.0 - busy / wall) for d, busy in per_dev.items()}
                out["bubble_share"] = max(0.0, 1.0 - sum(per_dev.values()) / (wall * len(per_dev)))
            elif wall > 0:
                # One device: no bubble, the stages run in turn; what is left is host overhead.
                out["outside_stages_share"] = max(0.0, 1.0 - sum(per_dev.values()) / wall)
            if len(per_dev) >= 2:
                out["ideal_bubble_share"] = (n_stages - 1) / (micro + n_stages - 1)
            return out

        state.setdefault("figures", {})[name] = figures
        title = (
            f"{n_stages} stages, {micro} micro-batches (pipeline)"
            if micro > 1
            else f"{n_stages} stages, whole batch (one stage at a time)"
        )
        return Strategy(name, step, title, setup=setup, teardown=teardown)

    strategies = [
        Strategy(
            "one_device",
            step_one,
            f"all {layers} blocks on {devices[0]}",
            setup=setup_one,
            teardown=lambda: state.pop("one", None),
        ),
        make_cut("split", 1),
    ]
    if m > 1:
        strategies.append(make_cut("pipeline", m))
    figures = state["figures"]

    def check(_name: str, out: Any) -> str | None:
        if tuple(out.shape) != (p["batch"], p["width"]):
            return f"output shape {tuple(out.shape)}, expected {(p['batch'], p['width'])}"
        return None

    def summarize(result: dict[str, Any]) -> dict[str, Any]:
        for entry in result["strategies"]:
            f = figures.get(entry["name"])
            if f is not None and entry["status"] == "ok":
                entry.update(f())
        placement = [
            {"stage": i, "device": str(d), "layers": list(range(a, b))}
            for i, ((a, b), d) in enumerate(zip(bounds, stage_dev))
        ]
        same = len({str(d) for d in stage_dev}) == 1
        return {
            "model_parallel": {
                "stages": placement,
                "devices": [str(d) for d in devices],
                "runs_in_turn": same,
                "note": (
                    f"all stages on {devices[0]}: they run in turn, with no overlap"
                    if same
                    else f"{n_stages} stages over {len({str(d) for d in stage_dev})} devices"
                ),
            }
        }

    return Plan(
        strategies=strategies,
        baseline="one_device",
        check=check,
        summarize=summarize,
        teardown=state.clear,
    )


__all__ = ["WORKLOAD", "build", "stage_bounds", "wavefront"]
