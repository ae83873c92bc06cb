"""Serving step annotations parsed by hand-made strings: counts where recorded, None where not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuviz.analysis.serving_annotations import DECODE, MIXED, PREFILL, parse_step


def test_vllm_detailed_prefill_and_decode_sums() -> None:
    # 15 prompts of 1024 tokens: Σ Nq² = 15 · 1024², Σ Nq·Nkv the same (first chunk, Nkv = Nq)
    a = parse_step(
        "execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)"
        "_generation_0(sq0sk0sqsq0sqsk0)"
    )
    assert a is not None and a.framework == "vLLM" and a.phase == PREFILL
    assert (a.prefill.requests, a.prefill.q_tokens, a.prefill.kv_tokens) == (15, 15360, 15360)
    assert a.prefill.q_sq == 15 * 1024**2 and a.prefill.q_kv == 15 * 1024**2
    assert a.requests == 15 and a.tokens == 15360


def test_vllm_mixed_step() -> None:
    a = parse_step(
        "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
        "_generation_37(sq37sk34489sqsq37sqsk34489)"
    )
    assert a is not None and a.phase == MIXED
    assert a.prefill.requests == 9 and a.decode.requests == 37
    assert a.tokens == 8155 + 37 and a.requests == 46


def test_vllm_truncated_annotation_is_unknown_not_zero() -> None:
    # the example, cut where a long name is shown cut
    a = parse_step(
        "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489…"
    )
    assert a is not None and a.phase == MIXED
    assert a.decode.requests == 37
    assert a.decode.q_tokens is None and a.decode.kv_tokens is None
    assert a.tokens is None  # never 8155 + 0


def test_vllm_native_and_missing_generation() -> None:
    a = parse_step("execute_context_0(0)_generation_64(64)")
    assert a is not None and a.phase == DECODE and a.decode.q_tokens == 64 and a.tokens == 64
    b = parse_step("execute_context_2(6144)")
    assert b is not None and b.prefill.requests == 2 and b.decode.requests is None
    assert b.phase is None and b.requests is None  # a decode part may be there, unrecorded


@pytest.mark.parametrize(
    ("name", "phase", "requests", "tokens"),
    [
        ("step[EXTEND bs=15 toks=15360]", PREFILL, 15, 15360),
        ("step[DECODE bs=64]", DECODE, 64, 64),
        ("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]", DECODE, 64, 128),
        ("step[EXTEND bs=2]", PREFILL, 2, None),
        ("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12]", MIXED, 2, 6),
        ("step[MIXED bs=2]", MIXED, 2, None),
        ("step[DECODE]", DECODE, None, None),
        ("prefill[bs=2 tok=14721 ctx=[7803, 6918]]", PREFILL, 2, 14721),
        ("decode[bs=117/128 tok=117 d=117]", DECODE, 117, 117),
    ],
)
def test_sglang_and_atom(name: str, phase: str, requests: int | None, tokens: int | None) -> None:
    a = parse_step(name)
    assert a is not None and a.phase == phase
    assert a.requests == requests and a.tokens == tokens


@pytest.mark.parametrize("name", ["ProfilerStep#3", "aten::mm", "execute", "step", "decoder.layer"])
def test_other_names_are_not_steps(name: str) -> None:
    assert parse_step(name) is None


@given(st.text(max_size=80))
def test_never_raises_on_any_suffix(tail: str) -> None:
    for head in ("execute_", "execute_1_context_", "step[", "step[EXTEND ", "prefill[", "decode["):
        a = parse_step(head + tail)
        if a is not None:  # whatever it could read is a non-negative count or unknown
            for g in (a.prefill, a.decode):
                for x in (g.requests, g.q_tokens, g.kv_tokens, g.q_sq, g.q_kv):
                    assert x is None or x >= 0
