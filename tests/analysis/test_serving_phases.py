"""Serving phases: TTFT, TPOT, tokens/s and MBU counted by hand on a hand-made ``generate()``
trace; unknown figures None with a reason, never 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuviz.analysis.mbu import mbu, step_bytes
from gpuviz.analysis.serving_phases import serving_report
from gpuviz.analysis.steps import find_steps
from gpuviz.trace.kineto import load_trace
from tests.analysis.synthetic_trace import kineto_trace
from tests.analysis.test_serving_steps import VLLM, _generate_events

WEIGHT = 768 * 2304 * 4  # one addmm's weight, fp32


def test_phases_by_hand(tmp_path: Path) -> None:
    events, _ = _generate_events(new_tokens=3, gap=30.0)
    trace = kineto_trace(events, tmp_path)
    steps = find_steps(trace)
    r = serving_report(trace, steps)
    assert r is not None
    pre, dec = r.phase("prefill"), r.phase("decode")
    assert pre is not None and dec is not None
    assert (pre.steps, dec.steps) == (1, 3)
    assert pre.tokens == 10 and dec.tokens == 6
    assert r.ttft_ns == pytest.approx(100_000)  # the forward over the prompt: 100 µs
    assert r.tpot_ns == pytest.approx(130_000)  # each decode forward and the 30 µs before it
    assert dec.tokens_per_s == pytest.approx(6 / 300e-6)
    assert dec.gap_mean_ns == pytest.approx(30_000)
    # two addmm a forward, each reading its 768 x 2304 fp32 weight
    assert r.step_bytes == [2 * WEIGHT] * 4
    # no device properties: no peak bandwidth, so MBU is unknown, with why
    assert dec.mbu is None and "bandwidth" in dec.mbu_note
    assert r.to_json()["phases"][1]["mbu"] is None


def test_mbu_against_a_given_bandwidth() -> None:
    share, why = mbu(2 * WEIGHT, 100_000, 3.35)  # H100 SXM: 3.35 TB/s
    assert why == "" and share == pytest.approx(2 * WEIGHT / (100e-6 * 3.35e12))
    over, why = mbu(10**12, 1_000, 3.35)
    assert over is None and why.startswith("inconsistent")
    assert mbu(None, 1_000, 3.35)[0] is None
    assert mbu(10, 1_000, None)[0] is None


def test_graph_replay_bytes_are_unknown_not_a_floor() -> None:
    trace = load_trace(VLLM)
    steps = find_steps(trace)
    r = serving_report(trace, steps)
    assert r is not None
    assert step_bytes(trace, steps).nbytes[0] is not None  # the ops around the replay
    assert r.step_bytes == [None]  # but the replay's own GEMMs are not in this trace
    dec = r.phase("decode")
    assert dec is not None and dec.mbu is None and "graph" in dec.mbu_note
    assert dec.graph_steps == 1 and r.ttft_ns is None and r.tpot_ns is not None


def test_training_trace_has_no_report() -> None:
    trace = load_trace(Path(__file__).parent.parent / "data" / "streams_overlap.json.gz")
    assert serving_report(trace, find_steps(trace)) is None


def test_sglang_attention_flops_from_the_annotation() -> None:
    from tests.analysis.test_serving_steps import SGLANG

    trace = load_trace(SGLANG)
    steps = find_steps(trace)
    r = serving_report(trace, steps)
    assert r is not None
    # 15 prompts of 1024 tokens, causal: per head QKᵀ and PV each 2·N·N·d / 2 FLOPs; the
    # op's query is [15360, 32, 128], its value [..., 8, 128]; 36 layers (Qwen3-8B)
    per_request = 32 * (1024 * 1024 * 128 + 1024 * 1024 * 128)
    assert r.attention.calls == [36]
    assert r.attention.flops[0] == pytest.approx(15 * 36 * per_request)


def test_request_flops_decode_and_unknown() -> None:
    from gpuviz.analysis.serving_annotations import parse_step
    from gpuviz.analysis.serving_attention import request_flops

    # 2 decode requests attending to 60 and 40 cached tokens, non-causal: 2·N_KV·d per head
    a = parse_step("execute_2_context_0(sq0sk0sqsq0sqsk0)_generation_2(sq2sk100sqsq2sqsk100)")
    assert a is not None
    assert request_flops(a, heads=2, d_qk=4, d_v=4) == 2 * 2 * (60 + 40) * (4 + 4)
    b = parse_step("step[DECODE bs=2]")  # no sums: unknown, not 0
    assert b is not None and request_flops(b, 2, 4, 4) is None


def test_sdpa_reads_its_keys_and_values_once(tmp_path: Path) -> None:
    from tests.analysis.synthetic_trace import k_op, k_py

    kv = [4, 12, 130, 64]  # [batch, heads, cached tokens, head dim], bf16
    dims = [[4, 12, 1, 64], kv, kv, [], [], []]
    types = ["c10::BFloat16"] * 3 + ["", "", ""]
    events = [
        k_py("transformers/generation/utils.py(2215): generate", 0, 300),
        k_py("nn.Module: M_0", 10, 100),
        k_op("aten::embedding", 11, 2, **{"Input Dims": [[100, 8], [4, 1]]}),
        k_op(
            "aten::scaled_dot_product_attention",
            20,
            30,
            **{"Input Dims": dims, "Input type": types},
        ),
        # the flash op SDPA calls, nested: the same K and V, not read twice
        k_op(
            "aten::_scaled_dot_product_flash_attention",
            22,
            20,
            **{"Input Dims": dims[:3], "Input type": types[:3]},
        ),
    ]
    trace = kineto_trace(events, tmp_path)
    nb = step_bytes(trace, find_steps(trace))
    assert nb.kv_bytes == [2 * 4 * 12 * 130 * 64 * 2] and nb.weight_bytes == [0] and nb.ops == [1]
