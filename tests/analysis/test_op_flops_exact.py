"""The op and op-shape tables' FLOPs are exact int sums past 2**53 (issue 51): a job whose
``aten::mm`` calls carry Kineto ``flops`` near 2**52 each, so that every row of them sums past
2**53 (about 9 PFLOP), where a float64 sum rounds. The folder read whole gives the int sums of
the counts written into its JSON (summed here from the files, not by gpuviz), and the table
merged from the ranks' parts (``breakdown DIR --cluster``) is the same, instead of declining.
Counts that are not whole numbers keep their float64 sums and the merge declines."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import msgspec
from module_ranks import big_mm_flops, write_module_job
from test_breakdown_parts import _merged, _parts, _whole

from gpuviz.analysis.breakdown_parts import merge_breakdown


def _written(folder: Path) -> tuple[list[int], dict[bytes, list[int]]]:
    """The aten::mm counts written into the files: all of them, and by ``Input Dims``."""
    every: list[int] = []
    by_dims: dict[bytes, list[int]] = {}
    for f in sorted(folder.glob("*.json.gz")):
        for e in json.loads(gzip.decompress(f.read_bytes()))["traceEvents"]:
            if e.get("name") == "aten::mm" and e.get("ph") == "X":
                every.append(e["args"]["flops"])
                key = msgspec.json.encode(e["args"]["Input Dims"])
                by_dims.setdefault(key, []).append(e["args"]["flops"])
    return every, by_dims


def _float_sum(values: list[int]) -> int:
    """What a float64 running sum of the counts gives (the old path's figure)."""
    total = 0.0
    for v in values:
        total += float(v)
    return int(total)


def test_op_and_op_shape_flops_past_2_53_are_the_exact_sums(tmp_path: Path) -> None:
    folder = write_module_job(tmp_path / "big", edit=big_mm_flops)
    every, by_dims = _written(folder)
    assert len(every) > 100 and len(by_dims) >= 2

    op = _whole(folder, "op")
    (mm,) = [r for r in op["rows"] if r["key"] == "aten::mm"]
    assert mm["calls"] == len(every) and mm["flops"] == sum(every)
    assert _float_sum(every) != sum(every)  # the float path fails this
    assert _merged(folder, "op") == op  # merged, not declined

    shape = _whole(folder, "op-shape")
    rows = {
        msgspec.json.encode(r["input_shapes"]): r for r in shape["rows"] if r["key"] == "aten::mm"
    }
    assert set(rows) == set(by_dims)
    for dims, counts in by_dims.items():
        assert rows[dims]["flops"] == sum(counts) > 2**53
    assert any(_float_sum(c) != sum(c) for c in by_dims.values())
    assert _merged(folder, "op-shape") == shape


def test_counts_that_are_not_whole_numbers_are_not_merged(tmp_path: Path) -> None:
    """Kineto's ``flops`` of 2.5: the op row's FLOPs are the float64 sum made int, as ever,
    and the ranks' parts are declined (their sums' rounding is not the folder's)."""

    def halves(rank: int, doc: dict[str, Any]) -> None:
        for e in doc["traceEvents"]:
            if e.get("name") == "aten::mm" and e.get("ph") == "X":
                e["args"]["flops"] = 2.5

    folder = write_module_job(tmp_path / "halves", edit=halves)
    every, _ = _written(folder)
    (mm,) = [r for r in _whole(folder, "op")["rows"] if r["key"] == "aten::mm"]
    assert mm["flops"] == int(2.5 * len(every))
    for by in ("op", "op-shape"):
        why = merge_breakdown(_parts(folder, by))
        assert isinstance(why, str) and "whole numbers" in why, by
