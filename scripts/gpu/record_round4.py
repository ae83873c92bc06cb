"""Record the GPU test data of round 4 (issues 49, 50, 52): compiled, graph-replayed and served models, what-if.

Plain torch only (no gpuviz), so the data does not depend on the code it tests. On a CUDA
machine::

    python3 scripts/gpu/record_round4.py OUT_DIR [--cases attribution,graph,generate,whatif,gloo]

and, anywhere, the same code at tiny sizes (no figure worth keeping)::

    python3 scripts/gpu/record_round4.py OUT_DIR --device cpu --small

Writes into OUT_DIR (each trace recorded with ``record_shapes``, ``with_stack``, ``with_modules``):

- ``compile/``: ``gpt_eager.json.gz``, ``gpt_compile.json.gz`` (``torch.compile``, default mode)
  with ``gpt_compile.compile/`` (Inductor's debug output with provenance tracking on, and
  gpuviz's module stacks where ``gpuviz`` is importable: run with ``PYTHONPATH=.``), and
  ``gpt_reduce_overhead.json.gz`` (``mode="reduce-overhead"``: CUDA graphs; the profiled window
  holds the graphs' capture and their replays) with ``gpt_reduce_overhead.compile/``;
  ``truth.json``: each mode's CUDA-event step times and one eager step's FLOPs by
  ``FlopCounterMode``;
- ``graphs/manual_graph.json.gz``: a small MLP captured with ``torch.cuda.graph`` and replayed 5
  times, capture and replays in one trace;
- ``serving/hf_generate.json.gz``: Hugging Face GPT-2 (random weights, from its config)
  ``generate()`` with a KV cache, and ``hf_generate.truth.json``: each top-level forward timed by
  CUDA events recorded by forward hooks;
- ``whatif/planted.json.gz``, ``no_x1.json.gz``, ``no_x2.json.gz`` and ``truth.json``: a step with
  two planted matmuls, X1 on the main stream and X2 on a side stream overlapped with a main-stream
  wait kernel, and the same step without each (CUDA-event step times);
- ``whatif/gloo_slow/`` and ``whatif/gloo_even/``: a 2-rank gloo job (torchrun, both ranks on one
  GPU) whose rank 1 sleeps 8 ms on the CPU in a ``SLOW`` range each step, and the same job
  without it; per-rank ``rank-N.json.gz``, the CUDA-event step times in ``truth.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_attribution import TinyLM

CASES = ("attribution", "graph", "generate", "whatif", "gloo")


def _gzip(plain: Path) -> Path:
    out = plain.with_name(plain.name + ".gz")
    with plain.open("rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    plain.unlink()
    return out


def _profile(dev: str, sync_events: bool = False, **kw: Any) -> Any:
    if sync_events:
        # cuda_sync events (stream waits, synchronize calls): the edges of a critical path.
        kw["experimental_config"] = torch._C._profiler._ExperimentalConfig(
            enable_cuda_sync_events=True
        )
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.startswith("cuda") else [])
    return profile(
        activities=acts,
        record_shapes=True,
        with_stack=True,
        with_modules=True,
        with_flops=True,
        **kw,
    )


def _timed_steps(step: Callable[[], Any], n: int, dev: str, prof: Any | None = None) -> list[float]:
    """Run ``n`` steps; each step's time by CUDA events recorded where it starts its launches."""
    cuda = dev.startswith("cuda")
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)] if cuda else []
    t = [0.0] * (n + 1)
    for i in range(n):
        if cuda:
            ev[i].record()
        t[i] = time.perf_counter()
        step()
        if prof is not None:
            prof.step()
    if cuda:
        ev[n].record()
        torch.cuda.synchronize()
        return [ev[i].elapsed_time(ev[i + 1]) for i in range(n)]
    t[n] = time.perf_counter()
    return [(t[i + 1] - t[i]) * 1e3 for i in range(n)]


def _train_step(fwd: Any, opt: Any, x: Any, y: Any, vocab: int, dev: str) -> Callable[[], None]:
    cuda = dev.startswith("cuda")

    def step() -> None:
        with torch.autocast(torch.device(dev).type, dtype=torch.bfloat16, enabled=cuda):
            logits = fwd(x)
            loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def attribution(out: Path, dev: str, small: bool) -> dict[str, Any]:
    """A tiny LM trained eager, compiled, and compiled with CUDA graphs."""
    cuda = dev.startswith("cuda")
    dim, layers, batch, seq, vocab = (64, 2, 2, 32, 256) if small else (256, 4, 8, 128, 1024)
    info = out / "gpt_compile.compile"
    undo: Callable[[], None] = _nothing
    truth: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": torch.__version__,
        "layers": layers,
        "dim": dim,
    }
    for mode in ("eager", "compile", "reduce_overhead"):
        torch.manual_seed(0)
        model = TinyLM(vocab, seq, dim, layers, heads=4).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randint(0, vocab, (batch, seq), device=dev)
        y = torch.randint(0, vocab, (batch, seq), device=dev)
        if mode == "compile":
            undo = _compile_info_on(info)
            fwd = torch.compile(model)
        elif mode == "reduce_overhead":
            undo()  # its own compile-info folder: the graphs it captures are compiled anew
            undo = _compile_info_on(out / "gpt_reduce_overhead.compile")
            fwd = torch.compile(model, mode="reduce-overhead")
        else:
            fwd = model

        step = _train_step(fwd, opt, x, y, vocab, dev)

        # Compile (and, under reduce-overhead, cudagraph trees' warm-up run) outside the window;
        # the window's first step then records the graphs and the later ones replay them.
        warm = 1 if mode == "reduce_overhead" else 3
        for _ in range(warm):
            step()
        if cuda:
            torch.cuda.synchronize()
        if mode == "eager":
            counter = FlopCounterMode(display=False)
            with counter:
                step()
            truth["flop_counter_total"] = int(counter.get_total_flops())
        plain = out / f"gpt_{mode}.json"
        steps = 4
        with _profile(dev) as prof:
            ms = _timed_steps(step, steps, dev)
        prof.export_chrome_trace(str(plain))
        _gzip(plain)
        truth[mode] = {"step_ms": ms}
    undo()
    for junk in (
        "ir_pre_fusion.txt",
        "ir_post_fusion.txt",
        "fx_graph_runnable.py",
        "fx_graph_transformed.py",
    ):  # what gpuviz does not read: keep the data small
        for f in (*info.rglob(junk), *(out / "gpt_reduce_overhead.compile").rglob(junk)):
            f.unlink()
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    return truth


def _nothing() -> None:
    return None


def _compile_info_on(info: Path) -> Callable[[], None]:
    """Inductor's provenance for the compiled run, as ``gpuviz profile --compile-info`` asks for
    it (debug trace, provenance tracking, gpuviz's post-grad pass writing module stacks); the
    plain settings where gpuviz is not importable. The truth (eager run, CUDA events,
    FlopCounterMode) does not depend on it."""
    try:
        from gpuviz.engine.compile_info import enable_compile_info
    except ImportError:
        import torch._inductor.config as inductor

        inductor.trace.enabled = True
        inductor.trace.debug_dir = str(info)
        inductor.trace.provenance_tracking_level = 1

        def undo() -> None:
            inductor.trace.enabled = False

        return undo
    return enable_compile_info(info)


def manual_graph(out: Path, dev: str, small: bool) -> dict[str, Any]:
    """A small MLP captured with torch.cuda.graph and replayed 5 times, in one trace."""
    if not dev.startswith("cuda"):
        return {"skipped": "torch.cuda.graph needs a GPU"}
    d = 64 if small else 1024
    model = torch.nn.Sequential(
        torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d), torch.nn.LayerNorm(d)
    ).to(dev)
    static_x = torch.randn(32, d, device=dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    plain = out / "manual_graph.json"
    with _profile(dev) as prof:
        with torch.no_grad(), torch.cuda.graph(g):
            static_y = model(static_x)
        for _ in range(5):
            static_x.copy_(torch.randn(32, d, device=dev))
            g.replay()
        torch.cuda.synchronize()
    prof.export_chrome_trace(str(plain))
    _gzip(plain)
    return {"replays": 5, "out_sum": float(static_y.float().sum())}


def generate(out: Path, dev: str, small: bool) -> dict[str, Any]:
    """Hugging Face GPT-2 generate() with a KV cache; each top-level forward timed by CUDA events."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cuda = dev.startswith("cuda")
    cfg = GPT2Config(n_layer=2, n_embd=128, n_head=4) if small else GPT2Config()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg).to(dev).eval()
    if cuda:
        model = model.to(torch.bfloat16)
    batch, prompt, new = 4, 128, 16
    ids = torch.randint(0, cfg.vocab_size, (batch, prompt), device=dev)
    forwards: list[dict[str, Any]] = []
    pending: list[Any] = []

    def pre(_m: Any, args: Any, kwargs: Any) -> None:
        x = kwargs.get("input_ids", args[0] if args else None)
        if cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
        else:
            e = time.perf_counter()
        pending.append((e, None if x is None else int(x.shape[1])))

    def post(_m: Any, _args: Any, _kwargs: Any, _out: Any) -> None:
        start, n = pending.pop()
        if cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            forwards.append({"start": start, "end": e, "input_len": n})
        else:
            forwards.append({"ms": (time.perf_counter() - start) * 1e3, "input_len": n})

    kw = dict(
        max_new_tokens=new,
        min_new_tokens=new,
        do_sample=False,
        use_cache=True,
        pad_token_id=0,
        attention_mask=torch.ones_like(ids),
    )
    with torch.no_grad():
        model.generate(ids, **kw)  # warm-up: cuBLAS handles, allocator
        h1 = model.register_forward_pre_hook(pre, with_kwargs=True)
        h2 = model.register_forward_hook(post, with_kwargs=True)
        plain = out / "hf_generate.json"
        with _profile(dev) as prof:
            model.generate(ids, **kw)
            if cuda:
                torch.cuda.synchronize()
        h1.remove()
        h2.remove()
    prof.export_chrome_trace(str(plain))
    _gzip(plain)
    rows = []
    for i, f in enumerate(forwards):
        ms = f["start"].elapsed_time(f["end"]) if cuda else f["ms"]
        rows.append({"index": i, "cuda_event_ms": ms, "input_len": f["input_len"]})
    truth = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": torch.__version__,
        "batch": batch,
        "prompt": prompt,
        "new_tokens": new,
        "forwards": rows,
        "events": "cuda" if cuda else "perf_counter (no GPU: not CUDA events)",
    }
    (out / "hf_generate.truth.json").write_text(json.dumps(truth, indent=1))
    return truth


def whatif(out: Path, dev: str, small: bool) -> dict[str, Any]:
    """A step with X1 on the main stream and X2 on a side stream, and the step without each."""
    if not dev.startswith("cuda"):
        return {"skipped": "streams need a GPU"}
    n = 1024 if small else 8192
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    # The main stream's work while X2 runs beside it: one spinning thread (torch.cuda._sleep), so
    # X2 has the SMs to itself and removing it saves about nothing, while X1 is on the path.
    cycles = int(torch.cuda.get_device_properties(dev).clock_rate * 1e3 * 3e-3)  # ~3 ms

    def make(x1: bool, x2: bool) -> Callable[[], None]:
        def step() -> None:
            main = torch.cuda.current_stream()
            with torch.profiler.record_function("A"):
                torch.mm(a, b)
            side.wait_stream(main)
            if x2:
                with torch.cuda.stream(side), torch.profiler.record_function("X2"):
                    torch.mm(a, b)
            with torch.profiler.record_function("WAIT_KERNEL"):
                torch.cuda._sleep(cycles)
            main.wait_stream(side)
            if x1:
                with torch.profiler.record_function("X1"):
                    torch.mm(a, b)
            with torch.profiler.record_function("B"):
                torch.mm(a, b)
            torch.cuda.synchronize()

        return step

    truth: dict[str, Any] = {"device": torch.cuda.get_device_name(), "n": n, "sleep_cycles": cycles}
    for name, x1, x2 in (("planted", True, True), ("no_x1", False, True), ("no_x2", True, False)):
        step = make(x1, x2)
        for _ in range(3):
            step()
        plain = out / f"{name}.json"
        with _profile(dev, True, schedule=schedule(wait=1, warmup=1, active=4)) as prof:
            ms = _timed_steps(step, 6, dev, prof)
        prof.export_chrome_trace(str(plain))
        _gzip(plain)
        truth[name] = _steps_truth(ms)
    truth["note"] = TRUTH_NOTE
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    return truth


TRUTH_NOTE = (
    "step_ms: the CUDA-event times of profiled steps 2-4 (ProfilerStep#2-#4); all_step_ms: every "
    "step of the run (0-1 before the window: warm-up, first all-reduce; 5: its end event is "
    "recorded after the profiler's stop, so it bounds the step rather than timing it)"
)


def _steps_truth(ms: list[float]) -> dict[str, Any]:
    return {"step_ms": ms[2:5], "all_step_ms": ms, "profiled_steps": [2, 3, 4, 5]}


def gloo(out: Path, dev: str, small: bool) -> dict[str, Any]:
    """Two ranks over gloo (torchrun), rank 1 slowed by 8 ms of CPU in SLOW, and not slowed."""
    res = {}
    for name, slow in (("gloo_slow", 1), ("gloo_even", 0)):
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            str(29511 + slow),
            __file__,
            str(folder),
            "--device",
            dev,
            "--gloo-worker",
            str(slow),
        ]
        res[name] = subprocess.run(cmd, timeout=300).returncode
        # Beside the folder, not in it: a rank folder holds only the ranks' traces.
        ranks = [json.loads((out / f"{name}.truth-{r}.json").read_text()) for r in (0, 1)]
        truth_file = out / "truth.json"
        truth = json.loads(truth_file.read_text()) if truth_file.exists() else {}
        per_rank = [_steps_truth(r["step_ms"]) for r in ranks]
        truth[name] = {k: [r[k] for r in per_rank] for k in ("step_ms", "all_step_ms")}
        truth[name].update(profiled_steps=[2, 3, 4, 5], ranks=[0, 1])
        truth["note"] = TRUTH_NOTE
        truth_file.write_text(json.dumps(truth, indent=1))
    return res


def gloo_worker(folder: Path, dev: str, slow: bool) -> int:
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cuda = dev.startswith("cuda")
    n = 2048
    a = torch.randn(n, n, device=dev)
    grad = torch.randn(4 << 20, device=dev)

    def step() -> None:
        with torch.profiler.record_function("COMPUTE"):
            for _ in range(4):
                torch.mm(a, a)
        if slow and rank == 1:
            with torch.profiler.record_function("SLOW"):
                time.sleep(0.008)
        dist.all_reduce(grad)
        if cuda:
            torch.cuda.synchronize()

    for _ in range(3):
        step()
    dist.barrier()
    plain = folder / f"rank-{rank}.json"
    with _profile(dev, True, schedule=schedule(wait=1, warmup=1, active=4)) as prof:
        ms = _timed_steps(step, 6, dev, prof)
    prof.export_chrome_trace(str(plain))
    _gzip(plain)
    (folder.parent / f"{folder.name}.truth-{rank}.json").write_text(
        json.dumps({"rank": rank, "step_ms": ms, "profiled_steps": [2, 3, 4, 5]}, indent=1)
    )
    dist.destroy_process_group()
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--small", action="store_true")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--gloo-worker", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.gloo_worker is not None:
        return gloo_worker(a.out, a.device, bool(a.gloo_worker))
    jobs = {
        "attribution": ("compile", attribution),
        "graph": ("graphs", manual_graph),
        "generate": ("serving", generate),
        "whatif": ("whatif", whatif),
        "gloo": ("whatif", gloo),
    }
    report = {}
    for case in a.cases.split(","):
        sub, fn = jobs[case]
        folder = a.out / sub
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        try:
            got = fn(folder, a.device, a.small)
            report[case] = {"ok": True, "s": round(time.perf_counter() - t0, 1)}
            print(case, json.dumps(got)[:800], flush=True)
        except Exception as e:  # one case failing must not lose the others' data
            report[case] = {"ok": False, "error": repr(e)[:500]}
            print(case, "FAILED", repr(e), flush=True)
    print(json.dumps(report, indent=1))
    return 0 if all(r["ok"] for r in report.values()) else 1


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
