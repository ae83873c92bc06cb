"""Figures of a Kineto trace computed the plain way (json + gzip + Python), for tests.

Independent of gpuviz's importer on purpose: tests compare what the importer builds with what
this module computes from the same file. It follows DESIGN.md's rules directly (category eras,
a copy's device, ``"stream 7"`` tids, ``baseTimeNanoseconds``), written out again here.
Other helpers' tests may reuse it.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# DESIGN.md's category eras, lower-cased -> the kind name used in these tests.
KINDS = {
    "kernel": "kernel",
    "gpu_memcpy": "memcpy",
    "memcpy": "memcpy",
    "gpu_memset": "memset",
    "memset": "memset",
    "cuda_runtime": "runtime",
    "runtime": "runtime",
    "cuda_driver": "runtime",
    "cpu_op": "cpu_op",
    "operator": "cpu_op",
    "user_annotation": "user_annotation",
    "gpu_user_annotation": "gpu_user_annotation",
    "python_function": "python_function",
    "cuda_sync": "cuda_sync",
}
GPU_ACTIVITY = ("kernel", "memcpy", "memset")


def read_json(path: Path) -> Any:
    """The whole JSON value of a ``.json`` or ``.json.gz`` file."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def events_of(value: Any) -> list[dict[str, Any]]:
    """The event list of a trace value (an object with traceEvents, or a bare list)."""
    return value if isinstance(value, list) else value["traceEvents"]


def kind_of(event: dict[str, Any]) -> str:
    """The kind name of an event's category ("other" when unknown)."""
    return KINDS.get(str(event.get("cat", "")).lower(), "other")


def int_of(v: Any) -> int | None:
    """An int pid/tid/stream: ``7``, ``"7"`` and ``"stream 7"`` are 7; other values None."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(?:stream\s*)?(-?\d+)\s*", v, re.IGNORECASE)
        if m:
            return int(m.group(1))
    return None


def gpu_place(event: dict[str, Any]) -> tuple[int, int]:
    """(device, stream) of a GPU activity: args.device, else args.inDevice, else the pid."""
    args = event.get("args", {})
    device = args.get("device", args.get("inDevice", int_of(event.get("pid"))))
    stream = args.get("stream", int_of(event.get("tid")))
    return int(device), int(stream)


@dataclass
class Reference:
    """Figures of one trace file, computed from its plain JSON."""

    event_count: int = 0
    rank: int | None = None
    base_ns: int = 0
    slice_kinds: Counter[str] = field(default_factory=Counter)
    flows: int = 0
    memory_events: int = 0
    instants: int = 0
    metadata_events: int = 0
    # (device, stream) -> count, per GPU activity kind
    per_stream: dict[str, Counter[tuple[int, int]]] = field(default_factory=dict)
    copy_bytes: Counter[int] = field(default_factory=Counter)  # device -> bytes
    # device -> peak Total Allocated (or peak of the running Bytes sum, in 2021 traces)
    peak_allocated: dict[int, int] = field(default_factory=dict)
    peak_reserved: dict[int, int] = field(default_factory=dict)
    earliest_ns: int | None = None  # absolute ns of the earliest non-metadata event
    kernel_ns_total: int = 0


def reference(path: Path) -> Reference:
    """Compute a file's :class:`Reference` figures."""
    value = read_json(path)
    events = events_of(value)
    meta = value if isinstance(value, dict) else {}
    ref = Reference(event_count=len(events))
    info = meta.get("distributedInfo")
    if isinstance(info, dict) and isinstance(info.get("rank"), int):
        ref.rank = info["rank"]
    ref.base_ns = int(meta.get("baseTimeNanoseconds", 0))
    ref.per_stream = {k: Counter() for k in GPU_ACTIVITY}
    running: Counter[int] = Counter()
    earliest: float | None = None
    for e in events:
        ph = e.get("ph")
        if ph != "M" and isinstance(e.get("ts"), int | float):
            earliest = e["ts"] if earliest is None else min(earliest, e["ts"])
        if ph == "X":
            kind = kind_of(e)
            ref.slice_kinds[kind] += 1
            if kind in GPU_ACTIVITY:
                place = gpu_place(e)
                ref.per_stream[kind][place] += 1
                if kind == "memcpy":
                    ref.copy_bytes[place[0]] += int(e.get("args", {}).get("bytes", 0))
                if kind == "kernel":
                    ref.kernel_ns_total += round(e["dur"] * 1000)
        elif ph in ("s", "t", "f"):
            ref.flows += 1
        elif ph == "M":
            ref.metadata_events += 1
        elif e.get("name") == "[memory]":
            ref.memory_events += 1
            a = e["args"]
            if a.get("Device Type") != 1:
                continue
            dev = a["Device Id"]
            if "Total Allocated" in a:
                ref.peak_allocated[dev] = max(ref.peak_allocated.get(dev, 0), a["Total Allocated"])
                ref.peak_reserved[dev] = max(ref.peak_reserved.get(dev, 0), a["Total Reserved"])
            else:
                running[dev] += a["Bytes"]
                ref.peak_allocated[dev] = max(ref.peak_allocated.get(dev, 0), running[dev])
        else:
            ref.instants += 1
    if earliest is not None:
        ref.earliest_ns = ref.base_ns + _us_to_ns(earliest)
    return ref


def _us_to_ns(us: float) -> int:
    whole = math.floor(us)
    return int(whole) * 1000 + round((us - whole) * 1000)
