"""The example scripts run, small, on the CPU under ``gpuviz profile`` (unmodified)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_cli_profile import ROOT, events, profile, step_ranges, trace_events

EXAMPLES = ROOT / "examples"
TINY_GPT = ["--dim", "32", "--layers", "1", "--seq", "16", "--vocab", "128", "--batch", "2"]


@pytest.mark.slow
def test_gpt_example(tmp_path: Path) -> None:
    out, ev = tmp_path / "g.json.gz", tmp_path / "e.jsonl"
    r = profile(
        *("--skip", "2", "--warmup", "1", "--active", "2", "--out", str(out), "--events", str(ev)),
        *(str(EXAMPLES / "gpt_train.py"), "--steps", "8", "--device", "cpu", *TINY_GPT),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "step 7: loss" in r.stdout
    assert len([e for e in events(ev) if e["type"] == "StepTimed"]) == 8
    assert {e["name"] for e in step_ranges(trace_events(out))} == {
        "ProfilerStep#3",
        "ProfilerStep#4",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step_fn", "steps"), [("__main__:generate", 6), ("gpt_train:GPT.forward", 12)]
)
def test_generate_example_with_step_fn(tmp_path: Path, step_fn: str, steps: int) -> None:
    out, ev = tmp_path / "i.json.gz", tmp_path / "e.jsonl"
    r = profile(
        *("--skip", "1", "--warmup", "1", "--active", "2", "--out", str(out), "--events", str(ev)),
        *("--step-fn", step_fn, str(EXAMPLES / "generate.py"), "--device", "cpu"),
        *("--requests", "6", "--new", "2", "--dim", "32", "--layers", "1"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (
        len([e for e in events(ev) if e["type"] == "StepTimed"]) == steps
    )  # 6 requests x 2 tokens
    assert len({e["name"] for e in step_ranges(trace_events(out))}) == 2


@pytest.mark.slow
def test_resnet_example(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    out = tmp_path / "r.json.gz"
    r = profile(
        *("--skip", "1", "--warmup", "1", "--active", "1", "--stop", "--out", str(out)),
        *(str(EXAMPLES / "resnet_train.py"), "--device", "cpu", "--batch", "2", "--size", "32"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert {e["name"] for e in step_ranges(trace_events(out))} == {"ProfilerStep#2"}
