"""DataParallel splits of the real 2-GPU trace, against a plain-json computation."""

from __future__ import annotations

from pathlib import Path

import pytest
from figures_reference import Reference, union

from gpuviz.analysis.split_plan import plan_split
from gpuviz.analysis.splits import find_splits
from gpuviz.analysis.summary import summarize
from gpuviz.trace.kineto import load_trace

DP = Path(__file__).parent.parent / "data" / "dataparallel_seed_2gpu.json.gz"


@pytest.fixture(scope="module")
def rows():
    return find_splits(load_trace(DP))


def _expected_gpu_us() -> dict[tuple[int, int], float]:
    ref = Reference(DP)
    steps = sorted(
        (c["start"], c["end"])
        for c in ref.cpu_named
        if c["name"] == "DataParallel.forward" and c["cat"] == "user_annotation"
    )
    # NCCL kernels (the replicas' Broadcast) are launched by cuda_driver calls (cuLaunchKernelEx).
    launch = {
        c["corr"]: c["start"]
        for c in ref.cpu_named
        if c["cat"] in ("cuda_runtime", "cuda_driver") and c["corr"] is not None
    }
    out = {}
    for step, (t0, t1) in enumerate(steps):
        for dev in (0, 1):
            iv = [
                (g["start"], g["end"])
                for g in ref.gpu
                if g["device"] == dev
                and g["kind"] in ("kernel", "copy")
                and g["corr"] in launch
                and t0 <= launch[g["corr"]] <= t1
            ]
            out[(step, dev)] = union(iv) / 1000
    return out


def test_rows_per_replica(rows) -> None:
    assert [(r.step, r.device, r.rows) for r in rows] == [
        (0, 0, 15),
        (0, 1, 15),
        (1, 0, 15),
        (1, 1, 15),
        (2, 0, 15),
        (2, 1, 15),
        (3, 0, 5),
        (3, 1, 5),
    ]
    assert all(r.rank is None for r in rows)
    # The trace agrees with DataParallel's planner (Tensor.chunk on dim 0).
    for step, batch in enumerate((30, 30, 30, 10)):
        assert [r.rows for r in rows if r.step == step] == plan_split(batch, 2)
        assert [r.planned_rows for r in rows if r.step == step] == plan_split(batch, 2)
    assert {r.source for r in rows} == {"split_with_sizes"}


def test_gpu_time_per_replica(rows) -> None:
    expected = _expected_gpu_us()
    for r in rows:
        assert r.gpu_ns / 1000 == pytest.approx(expected[(r.step, r.device)], abs=1e-6)
        assert r.gpu_ns > 0


def test_summary_json_has_splits() -> None:
    j = summarize(load_trace(DP)).to_json()
    assert [set(r) for r in j["splits"]] == [{"rank", "step", "device", "rows", "gpu_us"}] * 8
    assert [r["rows"] for r in j["splits"]] == [15, 15, 15, 15, 15, 15, 5, 5]
    assert "splits" not in summarize(load_trace(DP.parent / "streams_overlap.json.gz")).to_json()


def test_concrete_inputs_nested_too_deeply_are_not_read(tmp_path: Path) -> None:
    # A "Concrete Inputs" string is parsed as JSON; 100k "[" must not end in a RecursionError.
    import gzip
    import json

    doc = json.loads(gzip.decompress(DP.read_bytes()))
    scatter = [e for e in doc["traceEvents"] if e.get("name") == "Scatter" and "args" in e]
    assert scatter
    for e in scatter:
        e["args"]["Concrete Inputs"] = ["[" * 100_000]
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(doc))
    deep = find_splits(load_trace(path))
    # The devices are then read from aten::chunk's count, as when Scatter has no inputs.
    assert {(r.step, r.device, r.rows) for r in deep} <= {
        (r.step, r.device, r.rows) for r in find_splits(load_trace(DP))
    }
    assert deep


@pytest.mark.parametrize("count", [121, -3])
def test_an_absurd_chunk_count_is_not_planned(tmp_path: Path, count: int) -> None:
    # issue 47, item 16's sibling: aten::chunk's count comes from the file; a count of 10**8
    # was a plan of 10**8 rows (and a negative one a ValueError). Not a real split: no rows.
    import gzip
    import json

    doc = json.loads(gzip.decompress(DP.read_bytes()))
    for e in doc["traceEvents"]:
        if e.get("name") == "Scatter" and "args" in e:
            e["args"]["Concrete Inputs"] = []  # the devices then come from the chunk count
        if e.get("name") == "aten::chunk" and "args" in e:
            e["args"]["Concrete Inputs"][1] = str(count)
    path = tmp_path / "chunk.json"
    path.write_text(json.dumps(doc))
    got = find_splits(load_trace(path))
    assert all(r.source != "chunk" for r in got)
    assert len({r.device for r in got}) <= 2  # the devices busy in each step, not 121
