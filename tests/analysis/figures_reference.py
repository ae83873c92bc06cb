"""An independent reading of Kineto JSON for tests: plain json/gzip/Decimal and Python loops.

It shares no code with gpuviz.trace or gpuviz.analysis, so figures that agree with it are
figures two different implementations agree on. Numbers are parsed as JSON floats (as any
reader does), then converted to integer nanoseconds exactly (through Decimal): an absolute
timestamp in µs near 1.7e15 only holds a quarter of a µs in a float, and the reference must
see the same timestamps as the importer, not more digits than a float has.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

KERNEL = {"kernel"}
COPY = {"gpu_memcpy", "memcpy"}
SET = {"gpu_memset", "memset"}


def read(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return {"traceEvents": data} if isinstance(data, list) else data


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.replace("stream", "").strip().isdigit():
        return int(v.replace("stream", "").strip())
    return None


def _ns(v: Any) -> int:
    return int((Decimal(v) * 1000).to_integral_value())  # Decimal(float) is the float's exact value


class Reference:
    """The figures of a trace file or folder, computed the slow, obvious way."""

    def __init__(self, path: Path) -> None:
        files = (
            sorted(p for p in path.iterdir() if p.name.endswith((".json", ".json.gz")))
            if path.is_dir()
            else [path]
        )
        self.events = 0
        self.ranks: list[int | None] = []
        self.slices: list[dict[str, Any]] = []  # every ph X: rank, ts_ns, end_ns
        self.gpu: list[dict[str, Any]] = []  # kernels, copies, sets
        self.memory: list[dict[str, Any]] = []
        self.cpu_named: list[dict[str, Any]] = []
        for i, f in enumerate(files):
            data = read(f)
            info = data.get("distributedInfo") or {}
            rank = (
                info.get("rank")
                if isinstance(info.get("rank"), int)
                else (i if path.is_dir() else None)
            )
            self.ranks.append(rank)
            base = int(data.get("baseTimeNanoseconds") or 0)
            evs = data.get("traceEvents") or []
            self.events += len(evs)
            for e in evs:
                if not isinstance(e, dict):
                    continue
                ph, cat = e.get("ph"), str(e.get("cat", "")).lower()
                if e.get("name") == "[memory]":
                    a = e.get("args") or {}
                    self.memory.append(
                        {
                            "rank": rank,
                            "ts": base + _ns(e["ts"]),
                            "type": a.get("Device Type"),
                            "device": a.get("Device Id"),
                            "bytes": a.get("Bytes"),
                            "total": a.get("Total Allocated"),
                            "reserved": a.get("Total Reserved"),
                        }
                    )
                    continue
                if (
                    ph != "X"
                    or not isinstance(e.get("dur"), int | float)
                    or not isinstance(e.get("ts"), int | float)
                ):
                    continue
                start = base + _ns(e["ts"])
                end = start + _ns(e["dur"])
                self.slices.append({"rank": rank, "start": start, "end": end})
                a = e.get("args") or {}
                if cat in KERNEL | COPY | SET:
                    dev = next(
                        (_int(a[k]) for k in ("device", "inDevice") if _int(a.get(k)) is not None),
                        _int(e.get("pid")),
                    )
                    stream = _int(a.get("stream"))
                    if stream is None:
                        stream = _int(e.get("tid"))
                    kind = "kernel" if cat in KERNEL else "copy" if cat in COPY else "set"
                    self.gpu.append(
                        {
                            "rank": rank,
                            "device": dev,
                            "stream": stream,
                            "kind": kind,
                            "name": e.get("name"),
                            "start": start,
                            "end": end,
                            "bytes": a.get("bytes"),
                            "corr": a.get("correlation"),
                        }
                    )
                else:
                    self.cpu_named.append(
                        {
                            "rank": rank,
                            "name": e.get("name"),
                            "cat": cat,
                            "start": start,
                            "end": end,
                            "tid": e.get("tid"),
                            "corr": a.get("correlation"),
                            "args": a,
                        }
                    )

    # -- figures ---------------------------------------------------------------------------

    def span_us(self) -> float:
        if not self.slices:
            return 0.0
        return (max(s["end"] for s in self.slices) - min(s["start"] for s in self.slices)) / 1000

    def streams(self) -> dict[tuple[Any, int, int], dict[str, Any]]:
        out: dict[tuple[Any, int, int], dict[str, Any]] = {}
        for g in self.gpu:
            key = (g["rank"], g["device"], g["stream"])
            row = out.setdefault(
                key,
                {
                    "kernels": 0,
                    "kernel_us": 0,
                    "memcpy": 0,
                    "memcpy_bytes": 0,
                    "memset": 0,
                    "iv": [],
                },
            )
            row["iv"].append((g["start"], g["end"]))
            if g["kind"] == "kernel":
                row["kernels"] += 1
                row["kernel_us"] += g["end"] - g["start"]
            elif g["kind"] == "copy":
                row["memcpy"] += 1
                row["memcpy_bytes"] += (
                    g["bytes"] if isinstance(g["bytes"], int) and g["bytes"] >= 0 else 0
                )
            else:
                row["memset"] += 1
        for row in out.values():
            row["kernel_us"] /= 1000
            row["busy_us"] = union(row.pop("iv")) / 1000
        return out

    def devices(self) -> dict[tuple[Any, int], float]:
        iv: dict[tuple[Any, int], list[tuple[int, int]]] = defaultdict(list)
        for g in self.gpu:
            iv[(g["rank"], g["device"])].append((g["start"], g["end"]))
        return {k: union(v) / 1000 for k, v in iv.items()}

    def top_kernels(self, n: int = 10) -> list[tuple[str, int, float]]:
        tot: dict[str, int] = defaultdict(int)
        cnt: dict[str, int] = defaultdict(int)
        for g in self.gpu:
            if g["kind"] == "kernel":
                tot[g["name"]] += g["end"] - g["start"]
                cnt[g["name"]] += 1
        names = sorted(tot, key=lambda k: (-tot[k], k))[:n]
        return [(k, cnt[k], tot[k] / 1000) for k in names]

    def memory_peaks(self) -> dict[tuple[Any, int], tuple[int, int | None, bool]]:
        per: dict[tuple[Any, int], list[dict[str, Any]]] = defaultdict(list)
        for m in self.memory:
            if m["type"] == 1:
                per[(m["rank"], m["device"])].append(m)
        out = {}
        for key, evs in per.items():
            evs.sort(key=lambda m: m["ts"])
            totals = [m["total"] for m in evs if isinstance(m["total"], int)]
            if totals:
                res = [m["reserved"] for m in evs if isinstance(m["reserved"], int)]
                out[key] = (max(totals), max(res) if res else None, False)
            else:
                run, peak = 0, 0
                for m in evs:
                    run += m["bytes"]
                    peak = max(peak, run)
                out[key] = (peak, None, True)
        return out

    def overlap_us(self) -> tuple[float, float]:
        per: dict[tuple[Any, int], list[dict[str, Any]]] = defaultdict(list)
        for g in self.gpu:
            per[(g["rank"], g["device"])].append(g)
        cc = ms = 0
        for evs in per.values():
            kern = [(g["start"], g["end"]) for g in evs if g["kind"] == "kernel"]
            copy = [(g["start"], g["end"]) for g in evs if g["kind"] == "copy"]
            cc += sweep([kern, copy], 2)
            by_stream: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for g in evs:
                if g["kind"] == "kernel":
                    by_stream[g["stream"]].append((g["start"], g["end"]))
            ms += sweep(list(by_stream.values()), 2)
        return cc / 1000, ms / 1000


def union(iv: list[tuple[int, int]]) -> int:
    """Union length by the textbook merge in Python."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def sweep(sets: list[list[tuple[int, int]]], k: int) -> int:
    """Time covered by >= k sets: walk the boundaries, keeping each set's count of open intervals."""
    events = sorted(
        (t, d, i) for i, iv in enumerate(sets) for s, e in iv if e > s for t, d in ((s, 1), (e, -1))
    )
    open_count = [0] * len(sets)
    covering = 0
    total = 0
    last = None
    for t, d, i in events:
        if last is not None and covering >= k:
            total += t - last
        last = t
        before = open_count[i] > 0
        open_count[i] += d
        covering += (open_count[i] > 0) - before
    return total
