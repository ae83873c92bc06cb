"""Edited copies of recorded traces for the tests: every event slower, or the kernels of one
module slower (the JSON is read, changed and written again; the recordings stay as they are)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


def load_trace_json(path: Path) -> dict[str, Any]:
    """A ``.json.gz`` trace's JSON."""
    with gzip.open(path, "rt") as f:
        return json.load(f)  # type: ignore[no-any-return]


def write_trace_json(doc: dict[str, Any], path: Path) -> Path:
    """Write ``doc`` to ``path`` as ``.json.gz``; returns ``path``."""
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


def stretched(src: Path, out: Path, factor: float) -> Path:
    """A copy of a trace with every event ``factor`` times as long and as far from the start:
    every kernel and every step ``factor`` times longer."""
    doc = load_trace_json(src)
    events = doc["traceEvents"]
    t0 = min(e["ts"] for e in events if "ts" in e and e.get("ph") != "M")
    for e in events:
        if "ts" in e and e.get("ph") != "M":
            e["ts"] = t0 + (e["ts"] - t0) * factor
        if "dur" in e:
            e["dur"] = e["dur"] * factor
    return write_trace_json(doc, out)


def module_stretched(src: Path, out: Path, module: str, factor: float) -> Path:
    """A copy of a trace with the kernels launched inside ``nn.Module: {module}``'s forward
    ranges ``factor`` times as long: the launches (runtime and driver calls) that sit in one of
    its ranges on its thread name the kernels by their correlation id."""
    doc = load_trace_json(src)
    events = doc["traceEvents"]
    spans = [
        (e["tid"], e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("cat") == "python_function" and e.get("name") == f"nn.Module: {module}"
    ]
    assert spans, module
    launched = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and any(t == e["tid"] and a <= e["ts"] <= b for t, a, b in spans)
    }
    kernels = [
        e for e in events if e.get("cat") == "kernel" and e["args"]["correlation"] in launched
    ]
    assert kernels, module
    for e in kernels:
        e["dur"] *= factor
    return write_trace_json(doc, out)
