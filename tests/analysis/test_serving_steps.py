"""Serving steps: vLLM and SGLang traces (real, TraceLens's test data), a hand-made
``generate()`` trace, and the GPU recording of ``generate()`` the lead makes (skipped while
absent). Figures are checked against the raw JSON events, read here without gpuviz."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.serving_steps import serving_steps
from gpuviz.analysis.steps import find_steps
from gpuviz.trace.kineto import load_trace
from tests.analysis.synthetic_trace import k_kernel, k_launch, k_op, k_py, kineto_trace

DATA = Path(__file__).parent.parent / "data"
SGLANG = DATA / "serving" / "sglang_extend_qwen3_8b.json.gz"
VLLM = DATA / "tl__inference__vllm_decode_full__graph_execution.json.gz"
GPU = DATA / "serving" / "gpu"


def _raw(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return list(json.load(f)["traceEvents"])


def _own_work_us(events: list[dict[str, Any]], c0: float, c1: float) -> tuple[float, float]:
    """The end of the GPU work launched in [c0, c1) (by correlation) and its busy union."""
    launched = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") == "cuda_runtime"
        and c0 <= e["ts"] < c1
        and "correlation" in e.get("args", {})
    }
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    end = max(e["ts"] + e["dur"] for e in gpu if e["args"].get("correlation") in launched)
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu)
    busy, cur0, cur1 = 0.0, spans[0][0], spans[0][1]
    for a, b in spans[1:]:
        if a > cur1:
            busy, cur0 = busy + cur1 - cur0, a
        cur1 = max(cur1, b)
    return max(end, c1), busy + cur1 - cur0


def test_sglang_extend_is_one_prefill_step_with_its_tokens() -> None:
    events = _raw(SGLANG)
    anns = [e for e in events if e.get("cat") == "user_annotation"]
    outer = max(anns, key=lambda e: e["dur"])  # execute_… holds step[EXTEND …]
    trace = load_trace(SGLANG)
    steps = find_steps(trace)
    sv = serving_steps(trace, steps)
    assert len(steps) == 1 and steps.source == ["SGLang"]
    assert sv.phase == ["prefill"] and sv.requests == [15] and sv.tokens == [15 * 1024]
    assert sv.decode_tokens == [0] and sv.graph == [False]
    t0 = min(e["ts"] for e in events if e.get("ph") == "X")
    end_us, busy_us = _own_work_us(events, outer["ts"], outer["ts"] + outer["dur"])
    assert steps.start_ns[0] / 1e3 == pytest.approx(outer["ts"] - t0, abs=0.01)
    assert steps.end_ns[0] / 1e3 == pytest.approx(end_us - t0, abs=0.01)
    assert sv.busy_ns[0] / 1e3 == pytest.approx(busy_us, abs=0.1)  # float µs of ts ~5e12


def test_vllm_decode_step_replays_a_graph() -> None:
    events = _raw(VLLM)
    (ann,) = [e for e in events if e.get("cat") == "user_annotation"]
    trace = load_trace(VLLM)
    steps = find_steps(trace)
    sv = serving_steps(trace, steps)
    assert steps.source == ["vLLM"] and sv.phase == ["decode"]
    assert (sv.requests, sv.tokens, sv.kv_tokens) == ([32], [32], [55086])
    assert sv.graph == [True]
    assert any(e["name"] == "hipGraphLaunch" for e in events if e.get("cat") == "cuda_runtime")
    t0 = min(e["ts"] for e in events if e.get("ph") == "X")
    end_us, _ = _own_work_us(events, ann["ts"], ann["ts"] + ann["dur"])
    assert steps.end_ns[0] / 1e3 == pytest.approx(end_us - t0, abs=0.01)


def _generate_events(
    new_tokens: int = 3, gap: float = 30.0
) -> tuple[list[dict[str, Any]], list[tuple[float, float]]]:
    """``generate()`` over 2 prompts of 5 tokens: one forward over the prompt, then one per new
    token; each forward launches 2 kernels; sampling between forwards launches one more."""
    ev: list[dict[str, Any]] = []
    corr, t = 1, 10.0
    forwards = []
    total = 10 + (new_tokens + 1) * (100 + gap)
    ev.append(k_py("transformers/generation/utils.py(2215): generate", 5, total))
    for i in range(new_tokens + 1):
        ids = [2, 5] if i == 0 else [2, 1]
        ev.append(k_py("nn.Module: GPT2LMHeadModel_0", t, 100))
        ev.append(k_py("nn.Module: GPT2Model_0", t + 1, 98))  # nested: not a step
        ev.append(
            k_op("aten::embedding", t + 2, 5, **{"Input Dims": [[50257, 768], ids, [], [], []]})
        )
        ev.append(
            k_op(
                "aten::embedding",
                t + 8,
                5,
                **{"Input Dims": [[1024, 768], [1, ids[1]], [], [], []]},
            )
        )
        for j in range(2):
            # GPT-2's Conv1D: addmm(bias, x, weight), the weight 768 x 2304 fp32
            dims = [[2304], [ids[0] * ids[1], 768], [768, 2304], [], []]
            types = ["float", "float", "float", "Scalar", "Scalar"]
            ev.append(
                k_op("aten::addmm", t + 18 + 30 * j, 8, **{"Input Dims": dims, "Input type": types})
            )
            ev.append(k_launch(t + 20 + 30 * j, corr))
            ev.append(k_kernel("gemm", t + 25 + 30 * j, 20, corr))
            corr += 1
        forwards.append((t, t + 100))
        ev.append(k_launch(t + 100 + gap / 2, corr))  # sampling: in no forward
        ev.append(k_kernel("argmax", t + 101 + gap / 2, 3, corr))
        corr += 1
        t += 100 + gap
    return ev, forwards


def test_generate_forwards_are_prefill_then_decode(tmp_path: Path) -> None:
    events, forwards = _generate_events()
    trace = kineto_trace(events, tmp_path)
    steps = find_steps(trace)
    sv = serving_steps(trace, steps)
    assert steps.source == ["generate"] * 4
    assert sv.phase == ["prefill", "decode", "decode", "decode"]
    assert sv.tokens == [10, 2, 2, 2] and sv.requests == [2, 2, 2, 2]
    t0 = 5.0
    for i, (a, b) in enumerate(forwards):
        assert steps.start_ns[i] / 1e3 == pytest.approx(a - t0)
        assert steps.end_ns[i] / 1e3 == pytest.approx(b - t0)  # the sampling is no step's
    assert list(sv.gap_before_ns[1:] / 1e3) == pytest.approx([30.0] * 3)


def test_two_generate_calls_each_start_with_a_prefill(tmp_path: Path) -> None:
    first, _ = _generate_events(new_tokens=1)
    second, _ = _generate_events(new_tokens=1)
    shift = 1000.0
    for e in second:
        e["ts"] += shift
        if "correlation" in e.get("args", {}):
            e["args"]["correlation"] += 100
    trace = kineto_trace(first + second, tmp_path)
    sv = serving_steps(trace, find_steps(trace))
    assert sv.phase == ["prefill", "decode", "prefill", "decode"]


def test_training_trace_has_no_serving_steps() -> None:
    trace = load_trace(DATA / "streams_overlap.json.gz")
    steps = find_steps(trace)
    assert "generate" not in steps.source and set(steps.source) <= {
        "trace",
        "ProfilerStep",
        "gpuviz",
    }
    assert serving_steps(trace, steps).phase == [None] * len(steps)


@pytest.mark.skipif(
    not (GPU / "hf_generate.json.gz").exists(),
    reason="tests/data/serving/gpu/hf_generate.json.gz (the lead's GPU recording) is not there yet",
)
def test_hf_generate_recording_matches_cuda_events() -> None:
    truth = json.loads((GPU / "hf_generate.truth.json").read_text())["forwards"]
    trace = load_trace(GPU / "hf_generate.json.gz")
    steps = find_steps(trace)
    sv = serving_steps(trace, steps)
    # 16 new tokens: the forward over the prompt gives the first, 15 decode forwards the rest
    # (the truth file lists the forwards the hooks timed, whatever their count)
    assert len(truth) >= 2 and steps.source == ["generate"] * len(truth)
    assert sv.phase == ["prefill"] + ["decode"] * (len(truth) - 1)
    for i, f in enumerate(truth):
        assert sv.tokens[i] == 4 * f["input_len"]
        assert steps.duration_ns[i] / 1e6 == pytest.approx(f["cuda_event_ms"], rel=0.05), i


@pytest.mark.skipif(
    not (GPU / "hf_generate.json.gz").exists(),
    reason="tests/data/serving/gpu/hf_generate.json.gz (the lead's GPU recording) is not there yet",
)
def test_hf_generate_decode_reads_the_weights_of_gpt2_small() -> None:
    from gpuviz.analysis.serving_phases import serving_report

    trace = load_trace(GPU / "hf_generate.json.gz")
    r = serving_report(trace, find_steps(trace))
    assert r is not None
    # GPT-2 small from its config: 12 layers of c_attn 768x2304, c_proj 768x768, c_fc 768x3072,
    # mlp c_proj 3072x768, and lm_head 50257x768 (tied to wte): the weights a decode step reads
    params = 12 * (768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768) + 50257 * 768
    # the KV cache read, at most: 12 layers of K and V [4, 12, 128 + 16, 64]
    kv = 12 * 2 * 4 * 12 * (128 + 16) * 64
    for i, phase in enumerate(r.serving.phase):
        if phase != "decode":
            continue
        nbytes = r.step_bytes[i]
        assert nbytes is not None
        size = 4 if nbytes >= 4 * params else 2  # fp32 from the config, or a half cast
        assert size * params <= nbytes <= size * (params + kv), i


def _step_function_events(
    outer: list[tuple[str, str]], inner: str, extra: str | None
) -> list[dict[str, Any]]:
    """Steps found by their Python frames only: each ``inner`` frame (the step) 100 µs, held by
    the ``outer`` handler of its phase and holding the ``extra`` call, a kernel each."""
    ev: list[dict[str, Any]] = []
    t = 10.0
    for corr, (handler, _) in enumerate(outer, start=1):
        if handler:
            ev.append(k_py(handler, t - 5, 110))
        ev.append(k_py(inner, t, 100))
        if extra is not None:
            ev.append(k_py(extra.format(phase=_), t + 10, 50))
        ev.append(k_launch(t + 20, corr))
        ev.append(k_kernel("k", t + 25, 30, corr))
        t += 200
    return ev


def test_tgi_sglang_and_vllm_step_functions(tmp_path: Path) -> None:
    tgi = _step_function_events(
        [
            ("text_generation_server/server.py(180): Prefill", "prefill"),
            ("text_generation_server/server.py(210): Decode", "decode"),
        ],
        "text_generation_server/models/flash_causal_lm.py(1700): generate_token",
        None,
    )
    trace = kineto_trace(tgi, tmp_path, "tgi.json")
    steps = find_steps(trace)
    sv = serving_steps(trace, steps)
    assert steps.source == ["TGI", "TGI"] and sv.phase == ["prefill", "decode"]
    assert sv.tokens == [None, None] and "token counts" in sv.why[0]  # not recorded: unknown

    sgl = _step_function_events(
        [("", "extend"), ("", "decode")],
        "sglang/srt/managers/tp_worker.py(445): forward_batch_generation",
        "sglang/srt/model_executor/model_runner.py(3003): forward_{phase}",
    )
    trace = kineto_trace(sgl, tmp_path, "sgl.json")
    sv = serving_steps(trace, find_steps(trace))
    assert sv.phase == ["prefill", "decode"]

    vllm = _step_function_events(
        [("", ""), ("", "")], "vllm/v1/worker/gpu_model_runner.py(3380): execute_model", None
    )
    trace = kineto_trace(vllm, tmp_path, "vllm.json")
    steps = find_steps(trace)
    sv = serving_steps(trace, steps)
    assert steps.source == ["vLLM", "vLLM"] and sv.phase == [None, None]
    assert "not annotated" in sv.why[0]
