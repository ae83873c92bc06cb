"""``gpuviz profile``'s experiment switches (``GPUVIZ_PROFILE_<X>=0``, benchmarks/bench_profile.py).

The CPU test runs a real script; the GPU one runs on the device machine:
``PYTHONPATH=. python -m pytest -m gpu tests/test_profile_switches.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli_profile import ROOT, events, profile, trace_events

WORKLOAD = ROOT / "benchmarks" / "profile_workload.py"


@pytest.mark.slow
def test_step_hook_and_sampler_switches(tmp_path: Path) -> None:
    out, ev, times = tmp_path / "t.json.gz", tmp_path / "e.jsonl", tmp_path / "times.json"
    r = profile(
        *("--skip", "3", "--warmup", "1", "--active", "4", "--out", str(out), "--events", str(ev)),
        *(str(WORKLOAD), "--device", "cpu", "--steps", "20", "--ops", "30"),
        *("--times", str(times)),
        cwd=ROOT,
        env={"GPUVIZ_PROFILE_STEP_HOOK": "0", "GPUVIZ_PROFILE_SAMPLER": "0"},
    )
    assert r.returncode == 0, r.stderr
    assert len(json.loads(times.read_text())) == 20  # the script ran all its steps
    stream = events(ev)
    # Steps 0-7 (the window ends at 7); the boundaries after it are ignored.
    assert [e["step"] for e in stream if e["type"] == "StepTimed"] == list(range(8))
    assert not [e for e in stream if e["type"] == "MemorySample"]
    assert stream[-1]["type"] == "Finished"
    assert any(
        str(e.get("name", "")).startswith("ProfilerStep#") for e in trace_events(out)["traceEvents"]
    )


@pytest.mark.gpu
def test_the_events_switch_on_the_gpu(tmp_path: Path) -> None:
    out, ev = tmp_path / "t.json.gz", tmp_path / "e.jsonl"
    r = profile(
        *("--skip", "3", "--warmup", "1", "--active", "4", "--out", str(out), "--events", str(ev)),
        *(str(WORKLOAD), "--device", "cuda", "--steps", "20"),
        cwd=ROOT,
        env={"GPUVIZ_PROFILE_EVENTS": "0"},
    )
    assert r.returncode == 0, r.stderr
    trace = trace_events(out)["traceEvents"]
    assert any(e.get("cat") == "kernel" for e in trace)  # the trace itself is untouched
    timed = [e for e in events(ev) if e["type"] == "StepTimed"]
    assert len(timed) == 20 and all("gpu_ms" not in e for e in timed)
