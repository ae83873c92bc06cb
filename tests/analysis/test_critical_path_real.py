"""The critical path on real traces: the replay reproduces them, and HTA's critical path of
its own two test traces agrees with ours.

HTA's figures below come from HolisticTraceAnalysis 0.5's ``critical_path_analysis(rank=0,
annotation="", instance_id=0)`` on the same files (``get_critical_path_breakdown()``, summed
by ``bound_by`` and, for ``gpu_compute_bound``, by ``s_name``); docs/critical_path.md gives the
script and says where and why the two differ.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.critical_path import critical_path, path_json, replay
from gpuviz.analysis.dep_graph import E_EVENT, build_step_graph, step_numbers
from gpuviz.analysis.steps import find_steps
from gpuviz.analysis.whatif import Change, predict
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parents[1] / "data"
ALEXNET = DATA / "hta__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz"
MULTI = DATA / "hta__critical_path__cuda_event_sync_multi_stream__event_sync_trace.json.gz"


def _path(path: Path, top: int = 50) -> tuple[dict, object]:
    trace = load_trace(path)
    steps = find_steps(trace)
    g = build_step_graph(trace, steps, step_numbers(steps)[0])
    rp = replay(g)
    return path_json(trace, g, rp, critical_path(g, rp), top), g


@pytest.mark.parametrize(
    "name", [ALEXNET.name, MULTI.name, "gloo_2rank_h100", "streams_overlap.json.gz", "ddp_2rank"]
)
def test_the_replay_reproduces_every_recorded_start(name: str) -> None:
    trace = load_trace(DATA / name)
    steps = find_steps(trace)
    for number in step_numbers(steps):
        g = build_step_graph(trace, steps, number)
        rp = replay(g)
        assert np.array_equal(rp.start_ns, g.start_ns), number
        # The path tiles its span: work and waits add up to it.
        p = critical_path(g, rp)
        assert int(p.work_ns.sum() + p.wait_ns.sum()) == p.span_ns


def test_alexnet_gpu_work_on_the_path_agrees_with_hta() -> None:
    j, _ = _path(ALEXNET)
    kernels = {k["name"]: k for k in j["kernels"]}
    # HTA: the 16 pageable H2D copies (55 503 µs) and the 3 cuDNN implicit GEMMs (910 µs).
    copy = kernels["Memcpy HtoD (Pageable -> Device)"]
    assert (copy["calls"], copy["us"]) == (16, 55503.0)
    xmma = next(k for n, k in kernels.items() if n.startswith("sm80_xmma_fprop_implicit_gemm"))
    assert (xmma["calls"], xmma["us"]) == (3, 910.0)
    # HTA's gpu_compute_bound total is 60 109 µs; ours within 2% (HTA puts 2 more short
    # sgemms on its path, see docs/critical_path.md).
    gpu = j["by_category"]["compute"]["us"] + j["by_category"]["copies"]["us"]
    assert abs(gpu - 60109.0) / 60109.0 < 0.02
    # Both find the step CPU-bound: HTA's cpu_bound is 43 283 313 of 43 355 656 µs (99.8%).
    assert j["by_category"]["cpu"]["share"] > 0.99


def test_event_sync_multi_stream_path_holds_the_kernel_hta_finds() -> None:
    j, g = _path(MULTI)
    # HTA: one kernel on the path, ampere_sgemm_128x64_nn, 123 µs.
    assert [(k["name"], k["calls"], k["us"]) for k in j["kernels"]] == [
        ("ampere_sgemm_128x64_nn", 1, 123.0)
    ]
    # The trace's one Stream Wait Event became an event edge.
    assert int((g.edge_kind == E_EVENT).sum()) == 1


def test_a_slow_gloo_rank_made_even_predicts_the_even_run() -> None:
    """tests/data/whatif/cpu_gloo: the same 2-rank gloo job with rank 1 slowed by ``SLOW``
    and without it. Removing SLOW on rank 1 in the slow run's steps must predict the even
    run's steps (the profiled ones of both: the profiler's cost is in both) within 10%, where
    the slow run's own steps are further off than that."""
    slow = load_trace(DATA / "whatif" / "cpu_gloo" / "slow")
    even = load_trace(DATA / "whatif" / "cpu_gloo" / "even")
    s_steps, e_steps = find_steps(slow), find_steps(even)
    predicted, measured = [], []
    for number in step_numbers(s_steps):
        g = build_step_graph(slow, s_steps, number)
        p = predict(slow, g, [Change("SLOW", rank=1)])
        assert p.matched[0] > 0
        predicted.append(int(p.predicted_ns.max()))
        measured.append(int(p.measured_ns.max()))
    actual = [int(e_steps.duration_ns[e_steps.number == n].max()) for n in step_numbers(e_steps)]
    want = float(np.median(actual))
    assert abs(np.median(measured) - want) / want > 0.10  # the slowdown is there to find
    assert abs(np.median(predicted) - want) / want < 0.10


def test_a_module_path_names_its_backward_kernels_too() -> None:
    """``--faster TinyLM_0.Block_1.Attn_1=2``: the module's forward (its frames, on the main
    thread) and its backward (kernels the autograd thread launched, which attribution counts
    in it)."""
    from gpuviz.analysis.dep_graph import step_graph
    from gpuviz.analysis.whatif import match

    trace = load_trace(DATA / "attribution" / "tinylm_train.json.gz")
    g = step_graph(trace)
    hits = match(trace, g, "TinyLM_0.Block_1.Attn_1")
    gpu = hits & (g.thread < 0) & (g.launch_row >= 0)
    t = trace.tracks
    launch_tids = set(t.tid[trace.slices.track[g.launch_row[gpu]]].tolist())
    frames = [r for r in range(len(trace.slices)) if trace.name_of(r) == "nn.Module: Attn_1"]
    forward_tids = set(t.tid[trace.slices.track[frames]].tolist())
    assert forward_tids and launch_tids - forward_tids  # launched off the forward's thread
    # And nothing of Block_0's attention.
    other = match(trace, g, "TinyLM_0.Block_0.Attn_0")
    assert not (hits & other).any()
