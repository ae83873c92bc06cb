"""A rank folder's ``--by op-shape`` table from its ranks' parts
(:mod:`gpuviz.analysis.breakdown_shapes`, issue 51) is the folder read whole's: rows, their
order where they tie, FLOPs, bytes and the roofline columns against the folder's peaks; the
GEMMs' FLOPs are torch's FlopCounterMode figures times the calls counted in the JSON; where
the merge cannot be exact (peaks, convolution hints, shapes on some ranks only, sums of counts
that are not whole numbers) it says why instead of answering; sums past 2**53 are exact."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from module_ranks import write_module_job
from test_breakdown_parts import _job, _merged, _parts, _whole

from gpuviz.analysis.breakdown_parts import MergedBreakdown, merge_breakdown
from gpuviz.analysis.conv_hints import ConvHints

DATA = Path(__file__).parent.parent / "data"
ROOFLINE = DATA / "roofline"


def _slower(i: int, doc: dict[str, Any]) -> None:
    """File 1's kernels take 1.5 times as long: the ranks' roof shares differ."""
    if i == 1:  # new events: the files share the others
        doc["traceEvents"] = [
            dict(e, dur=round(e["dur"] * 1.5, 3)) if e.get("cat") == "kernel" else e
            for e in doc["traceEvents"]
        ]


def _roofline_job(tmp_path: Path, edit: Callable[[int, dict[str, Any]], None] = _slower) -> Path:
    return _job(tmp_path, ROOFLINE / "roofline.json.gz", [1, 0], edit)


def test_a_roofline_job_is_the_whole_folders_and_torchs_flops(tmp_path: Path) -> None:
    """GEMMs, TF32, convolutions and attention on two ranks (declared against file order)."""
    folder = _roofline_job(tmp_path)
    got = _merged(folder, "op-shape")
    assert got == _whole(folder, "op-shape")
    rows = got["rows"]
    assert sum(1 for r in rows if r["roof_share"] is not None and r["bound"] == "compute") >= 4
    # Independent: FlopCounterMode's FLOPs per call (roofline_expected.json) times the calls
    # of that op and those shapes counted in the JSON of the two files.
    expected = json.loads((ROOFLINE / "roofline_expected.json").read_text())
    events = json.loads(gzip.decompress((ROOFLINE / "roofline.json.gz").read_bytes()))
    checked = 0
    for case in expected["cases"]:
        if case["kind"] != "gemm" or case["op"] not in ("aten::mm", "aten::bmm"):
            continue
        dims = [case["shapes"]["a"], case["shapes"]["b"]]
        calls = 2 * sum(
            1
            for e in events["traceEvents"]
            if e.get("name") == case["op"] and e.get("args", {}).get("Input Dims") == dims
        )
        (row,) = [r for r in rows if r["key"] == case["op"] and r["input_shapes"] == dims]
        (torch_flops,) = {f["flops"] for f in case["torch_flops"]}
        assert row["calls"] == calls and row["flops"] == calls * torch_flops, case["name"]
        checked += 1
    assert checked >= 4


def test_two_different_runs_as_ranks_are_the_whole_folders(tmp_path: Path) -> None:
    """Two real TinyLM runs of their own shapes, calls and times (tests/module_ranks.py): shapes
    on one rank only, shapes on both with different sums."""
    folder = write_module_job(tmp_path / "job")
    got = _merged(folder, "op-shape")
    assert got == _whole(folder, "op-shape")
    rows = [r for r in got["rows"] if r["flops"] and r["roof_share"] is not None]
    assert len(rows) >= 5


def test_dropping_a_ranks_part_is_not_the_whole_folder(tmp_path: Path) -> None:
    """The comparison above would catch a merge that lost a rank."""
    folder = _roofline_job(tmp_path)
    parts = _parts(folder, "op-shape")
    one = merge_breakdown(parts[:1])
    assert isinstance(one, MergedBreakdown)
    want = _whole(folder, "op-shape")["rows"]
    assert [r.to_json("op-shape") for r in one.table.rows] != want


def test_rows_that_tie_keep_the_order_of_their_shapes_first_appearance(tmp_path: Path) -> None:
    """Two texts of one shape (``[[4, 4]]``, ``[[4,4]]``) are two rows, as read whole; rows of
    one op tying on every time are ordered by where their Input Dims first appear among all
    ops (``[[2]]`` under ``aten::mul`` on rank 0, before ``[[3]]``), not by where the
    op first appears with them (``aten::add [[3]]`` on rank 0, ``[[2]]`` on rank 1)."""

    def op(name: str, dims: list[list[int]], ts: float, dur: float = 5.0) -> dict[str, Any]:
        args = {"Input Dims": dims, "Input type": ["float"] * len(dims)}
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts,
                "dur": dur, "args": args}  # fmt: skip

    ranks = [
        [op("aten::mul", [[2]], 1000), op("aten::add", [[3]], 1010, 10.0),
         op("aten::sub", [[4, 4]], 1030)],
        [op("aten::add", [[2]], 1000, 10.0), op("aten::mul", [[2, 5]], 1020),
         op("aten::sub", [[4, 4]], 1030, 6.0)],
    ]  # fmt: skip
    for r, events in enumerate(ranks):
        doc = {"distributedInfo": {"rank": r, "world_size": 2}, "traceEvents": events}
        sep = (",", ":") if r == 1 else (", ", ": ")
        (tmp_path / f"rank-{r}.json").write_text(json.dumps(doc, separators=sep))
    got = _merged(tmp_path, "op-shape")
    assert got == _whole(tmp_path, "op-shape")
    assert [(r["key"], r["input_shapes"]) for r in got["rows"]] == [
        ("aten::add", [[2]]),
        ("aten::add", [[3]]),
        ("aten::sub", [[4, 4]]),  # rank 1's text, 6 µs
        ("aten::mul", [[2]]),
        ("aten::mul", [[2, 5]]),
        ("aten::sub", [[4, 4]]),  # rank 0's
    ]


def test_ranks_with_different_peaks_are_not_merged(tmp_path: Path) -> None:
    def bare(i: int, doc: dict[str, Any]) -> None:
        if i == 1:
            del doc["deviceProperties"]

    why = merge_breakdown(_parts(_roofline_job(tmp_path, bare), "op-shape"))
    assert isinstance(why, str) and "peaks" in why


def test_shapes_on_some_ranks_only_are_not_merged(tmp_path: Path) -> None:
    """The folder read whole reads no shape where its first and last ops have none."""

    def shapeless(i: int, doc: dict[str, Any]) -> None:
        if i == 0:  # new events: the files share the others
            doc["traceEvents"] = [
                dict(e, args={k: v for k, v in e["args"].items() if k != "Input Dims"})
                if "args" in e
                else e
                for e in doc["traceEvents"]
            ]

    why = merge_breakdown(_parts(_roofline_job(tmp_path, shapeless), "op-shape"))
    assert isinstance(why, str) and "shapes" in why


def test_ranks_whose_convolution_backwards_differ_are_not_merged(tmp_path: Path) -> None:
    """Each rank's convolutions were counted with its own backwards' hints, the folder's with
    all of them."""
    parts = _parts(_roofline_job(tmp_path), "op-shape")
    assert parts[0].shapes is not None and parts[0].shapes.hints != ConvHints()
    assert isinstance(merge_breakdown(parts), MergedBreakdown)
    parts[1].shapes = dataclasses.replace(parts[1].shapes, hints=ConvHints())  # type: ignore[arg-type]
    why = merge_breakdown(parts)
    assert isinstance(why, str) and "convolution" in why


def test_shape_sums_past_2_53_are_merged_exactly_and_floats_declined(tmp_path: Path) -> None:
    """The ranks' shape sums are exact ints: the folder's are their int sums past 2**53 too
    (where a float64 sum rounds); a rank whose sums are float64 sums of counts that are not
    whole numbers is declined."""
    big = 2**52 + 1
    assert float(big) + float(big) + 1.0 != 2 * big + 1  # float64 cannot hold the sum below
    parts = _parts(_roofline_job(tmp_path), "op-shape")
    for p in parts:
        assert p.shapes is not None and p.shapes.exact
        p.shapes.sums = [
            dataclasses.replace(
                s, flops=big if s.flops else s.flops, nbytes=big if s.nbytes else s.nbytes
            )
            for s in p.shapes.sums
        ]
    sums = parts[1].shapes.sums  # type: ignore[union-attr]
    first = next(s for s in sums if s.flops and s.nbytes)
    first.flops = first.nbytes = big + 1
    merged = merge_breakdown(parts)
    assert isinstance(merged, MergedBreakdown) and merged.hardware is not None
    shapes = {(s.name, str(s.input_dims), s.precision): s for s in merged.hardware.shapes}
    mine = shapes[(first.name, str(first.input_dims), first.precision)]
    assert mine.flops == mine.nbytes == 2 * big + 1
    assert all(s.flops in (None, 2 * big, 2 * big + 1) for s in shapes.values())
    assert all(s.nbytes in (None, 2 * big, 2 * big + 1) for s in shapes.values())
    # The table's columns print them (the row of that op and shapes, all its types).
    (row,) = [
        r for r in merged.table.rows if r.key == first.name and r.input_shapes == first.input_dims
    ]
    assert row.extra["bytes"] >= 2 * big + 1 and row.extra["bytes"] % 2 == 1
    parts[0].shapes.exact = False  # type: ignore[union-attr]
    why = merge_breakdown(parts)
    assert isinstance(why, str) and "whole numbers" in why
