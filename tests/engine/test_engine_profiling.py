"""Trace writing and the per-strategy figures read from the profiler's events."""

from __future__ import annotations

import enum
import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuviz.engine.profiling import gzip_file, strategy_figures


class DT(enum.Enum):
    CPU = 0
    CUDA = 1


@dataclass
class Ev:
    dev: DT
    nm: str
    s: int
    e: int
    stream: int = 0
    annotation: bool = False

    def device_type(self) -> DT:
        return self.dev

    def name(self) -> str:
        return self.nm

    def start_ns(self) -> int:
        return self.s

    def end_ns(self) -> int:
        return self.e

    def is_user_annotation(self) -> bool:
        return self.annotation

    def device_resource_id(self) -> int:
        return self.stream


def cpu(name: str, s: int, e: int, annotation: bool = False) -> Ev:
    return Ev(DT.CPU, name, s, e, annotation=annotation)


def gpu(name: str, s: int, e: int, stream: int = 7) -> Ev:
    return Ev(DT.CUDA, name, s, e, stream)


def test_strategy_figures_by_hand() -> None:
    events = [
        # step A: two launches, kernels at 100-200 and 300-400 on stream 7 -> busy 200 of span 300
        cpu("gpuviz/a#0", 0, 1000, annotation=True),
        cpu("cudaLaunchKernel", 10, 20),
        cpu("cudaLaunchKernel", 30, 40),
        cpu("aten::pow", 5, 50),
        gpu("kern", 100, 200),
        gpu("kern", 300, 400),
        gpu("[memory]", 15, 15, stream=0),  # allocator event: not activity
        gpu("gpuviz/a#0", 0, 1000),  # the GPU copy of our range: not activity
        # step B: one graph launch running 2 kernels on 2 streams, and a copy on a third
        cpu("gpuviz/b#1", 2000, 3000, annotation=True),
        cpu("cudaGraphLaunch", 2010, 2020),
        cpu("cudaMemcpyAsync", 2030, 2040),  # not a launch call
        gpu("k1", 2100, 2500, stream=13),
        gpu("k2", 2300, 2600, stream=17),
        gpu("Memcpy HtoD (Pinned -> Device)", 2400, 2800, stream=21),
        # outside any range: ignored
        gpu("late", 5000, 5100),
        cpu("cudaLaunchKernel", 4000, 4010),
    ]
    figs = strategy_figures(events)
    a, b = figs["a"], figs["b"]
    assert (a["launches"], a["kernels"], a["memcpy"], a["streams"]) == (2, 2, 0, 1)
    assert a["gpu_busy_us"] == pytest.approx(0.2) and a["gpu_span_us"] == pytest.approx(0.3)
    assert a["idle_share"] == pytest.approx(1 - 200 / 300)
    assert (b["launches"], b["kernels"], b["memcpy"], b["streams"]) == (1, 2, 1, 3)
    # k1 2100-2500 and k2 2300-2600 overlap 2300-2500; copy 2400-2800 meets kernels 2400-2600
    assert b["multi_stream_us"] == pytest.approx(0.2)
    assert b["compute_copy_us"] == pytest.approx(0.2)
    assert b["gpu_busy_us"] == pytest.approx(0.7) and b["idle_share"] == pytest.approx(0.0)


def test_strategy_figures_average_over_profiled_steps() -> None:
    events = [
        cpu("gpuviz/a#0", 0, 100, annotation=True),
        gpu("k", 10, 20),
        cpu("gpuviz/a#1", 200, 300, annotation=True),
        gpu("k", 210, 220),
        gpu("k", 230, 240),
    ]
    assert strategy_figures(events)["a"]["kernels"] == 2  # (1 + 3 kernels) / 2 steps, rounded
    assert strategy_figures(events)["a"]["profiled_steps"] == 2


@pytest.mark.parametrize("size", [0, 5, (16 << 20) + 3, 40 << 20])
def test_gzip_file_is_one_valid_member(tmp_path: Path, size: int) -> None:
    src = tmp_path / "t.json"
    data = (
        json.dumps(
            {"traceEvents": [{"name": "k", "ts": i} for i in range(size // 20 + 1)]}
        ).encode()
        * 2
    )[:size]
    src.write_bytes(data)
    dst = tmp_path / "t.json.gz"
    gzip_file(src, dst, workers=3)
    raw = dst.read_bytes()
    assert gzip.decompress(raw) == data
    # one member: a raw zlib decoder of the member consumes the whole file but the trailer
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert d.decompress(raw) == data and d.eof and d.unused_data == b""
