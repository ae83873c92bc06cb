"""A rank folder's breakdown made from its ranks' rows (:mod:`gpuviz.analysis.breakdown_parts`,
``breakdown DIR --cluster``, issue 51) is the folder read whole's, to the last digit: rows,
order, device time in no row, sources and import warnings; the kernel table's sums match the
raw events of the files counted here; a step table's FLOPs and MFU and its rank labels match
the whole folder's (ranks declared against file order too); where the ranks cannot be merged
exactly (different peaks, FLOPs known on some ranks only) the merge says why instead."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_parts import (
    BreakdownPart,
    MergedBreakdown,
    breakdown_part,
    merge_breakdown,
)
from gpuviz.analysis.breakdown_table import BreakdownRow
from gpuviz.analysis.hardware import annotate_breakdown, hardware
from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import import_trace, load_trace
from gpuviz.trace.one_job import NotOneJobError

DATA = Path(__file__).parent.parent / "data"
FOLDERS = ["ddp_2rank", "ddp_nccl_4rank", "gloo_2rank_h100", "gloo_4rank_cpu", "nccl_2rank_h200"]
STACKED = ["whatif/gpu/gloo_even", "whatif/gpu/gloo_slow"]  # rank folders with Python stacks


def _whole(folder: Path, by: str, mine: bool = False) -> dict[str, Any]:
    trace = load_trace(folder, cache=False)
    table = breakdown(trace, by, mine=mine)
    hw = None
    if by in ("step", "op-shape"):
        hw = hardware(trace, None)
        annotate_breakdown(table, hw)
    return {
        "rows": [r.to_json(by) for r in table.rows],
        "unattributed": table.unattributed_device_ns,
        "sources": list(trace.sources),
        "warnings": list(trace.warnings.samples),
        "peaks": None if hw is None else hw.peak_json(),
        "flop_warnings": None if hw is None else hw.warnings,
    }


def _parts(folder: Path, by: str, mine: bool = False) -> list[BreakdownPart]:
    return [
        breakdown_part(import_trace(str(f), max_memory=0).prepare(), by, mine)
        for f in trace_files(folder)
    ]


def _merged(folder: Path, by: str, mine: bool = False) -> dict[str, Any]:
    m = merge_breakdown(_parts(folder, by, mine))
    assert isinstance(m, MergedBreakdown), m
    return {
        "rows": [r.to_json(by) for r in m.table.rows],
        "unattributed": m.table.unattributed_device_ns,
        "sources": m.sources,
        "warnings": list(m.warnings.samples),
        "peaks": None if m.hardware is None else m.hardware.peak_json(),
        "flop_warnings": None if m.hardware is None else m.hardware.warnings,
    }


@pytest.mark.parametrize("by", ["op", "op-shape", "kernel", "step"])
@pytest.mark.parametrize("name", FOLDERS)
def test_the_merged_table_is_the_whole_folders(name: str, by: str) -> None:
    got, want = _merged(DATA / name, by), _whole(DATA / name, by)
    assert got == want
    if by != "kernel" or "cpu" not in name:
        assert got["rows"], "a table with rows"


@pytest.mark.parametrize("name", ["ddp_nccl_4rank", *STACKED])
def test_the_merged_op_shape_roofline_is_the_whole_folders(name: str) -> None:
    """Folders whose GEMMs have shapes on every rank: FLOPs, bytes and roof columns merged."""
    got = _merged(DATA / name, "op-shape")
    assert got == _whole(DATA / name, "op-shape")
    assert any(r["flops"] and r["bytes"] and r["bound"] for r in got["rows"])


@pytest.mark.parametrize("mine", [False, True])
@pytest.mark.parametrize("name", STACKED)
def test_the_merged_line_table_is_the_whole_folders(name: str, mine: bool) -> None:
    got = _merged(DATA / name, "line", mine)
    assert got["rows"] and got == _whole(DATA / name, "line", mine)


def test_the_kernel_table_sums_the_files_own_events() -> None:
    """Launches and device time per kernel name, counted here from the JSON of the files."""
    folder = DATA / "ddp_nccl_4rank"
    calls: dict[str, int] = {}
    dur: dict[str, float] = {}
    for f in trace_files(folder):
        events = json.loads(gzip.decompress(Path(f).read_bytes()))["traceEvents"]
        for e in events:
            if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                calls[e["name"]] = calls.get(e["name"], 0) + 1
                dur[e["name"]] = dur.get(e["name"], 0.0) + float(e["dur"])
    rows = _merged(folder, "kernel")["rows"]
    assert {r["key"]: r["calls"] for r in rows} == calls
    for r in rows:  # µs with 3 decimals, each event's dur in µs with up to 3
        assert r["device_total_us"] == pytest.approx(dur[r["key"]], abs=1e-3 * calls[r["key"]])


def _job(tmp_path: Path, source: Path, ranks: list[int], edit: Any = None) -> Path:
    """A rank folder of copies of one trace, file ``i`` declaring rank ``ranks[i]``."""
    doc = json.loads(gzip.decompress(source.read_bytes()))
    out = tmp_path / "job"
    out.mkdir()
    for i, rank in enumerate(ranks):
        one = dict(doc, distributedInfo={"rank": rank, "world_size": len(ranks)})
        if edit is not None:
            edit(i, one)
        (out / f"f{i}.json.gz").write_bytes(gzip.compress(json.dumps(one).encode()))
    return out


def test_step_flops_and_mfu_of_ranks_declared_against_file_order(tmp_path: Path) -> None:
    """A job with shapes and deviceProperties (MFU known), its files named against their
    declared ranks: the steps come in rank order, labelled with the declared rank."""
    folder = _job(tmp_path, DATA / "truth" / "resnet18.json.gz", [1, 0])
    got = _merged(folder, "step")
    assert got == _whole(folder, "step")
    rows = got["rows"]
    assert any(r["mfu"] is not None for r in rows) and all(r["flops"] for r in rows)
    assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)
    assert rows[0]["key"].startswith("rank 0 ") and rows[-1]["key"].startswith("rank 1 ")
    assert got["sources"] == [str(folder / "f1.json.gz"), str(folder / "f0.json.gz")]
    op = _merged(folder, "op")
    assert op == _whole(folder, "op") and any(r["flops"] for r in op["rows"])


def test_steps_of_ranks_counted_against_different_peaks_are_not_merged(tmp_path: Path) -> None:
    """One file without deviceProperties: its steps count against no peaks, the folder's
    against the other file's (GPUs of two kinds are not one job at all)."""

    def bare(i: int, doc: dict[str, Any]) -> None:
        if i == 1:
            del doc["deviceProperties"]

    folder = _job(tmp_path, DATA / "truth" / "resnet18.json.gz", [0, 1], bare)
    why = merge_breakdown(_parts(folder, "step"))
    assert isinstance(why, str) and "peaks" in why
    op = merge_breakdown(_parts(folder, "op"))  # no peaks in it
    assert isinstance(op, MergedBreakdown)
    assert [r.to_json("op") for r in op.table.rows] == _whole(folder, "op")["rows"]


def _part(rows: list[BreakdownRow], source: str, rank: int) -> BreakdownPart:
    return BreakdownPart(source, rank, None, ImportWarnings(), "op", rows)


def test_a_figure_known_on_some_ranks_only_is_not_summed() -> None:
    row = BreakdownRow("aten::mm", 2, 10, 20, 30, 40, flops=1000)
    unknown = dataclasses.replace(row, flops=None)
    merged = merge_breakdown([_part([row], "/j/r0.json", 0), _part([row], "/j/r1.json", 1)])
    assert isinstance(merged, MergedBreakdown)
    (r,) = merged.table.rows
    assert (r.calls, r.cpu_self_ns, r.device_total_ns, r.flops) == (4, 20, 80, 2000)
    why = merge_breakdown([_part([row], "/j/r0.json", 0), _part([unknown], "/j/r1.json", 1)])
    assert isinstance(why, str) and "flops" in why
    annotation = dataclasses.replace(row, kind="annotation")
    why = merge_breakdown([_part([row], "/j/r0.json", 0), _part([annotation], "/j/r1.json", 1)])
    assert isinstance(why, str) and "annotation" in why


def test_calls_flagged_on_every_rank_are_one_line_with_their_count(tmp_path: Path) -> None:
    """15 GEMM calls a rank with a recorded 'flops' of 1e308: the folder read whole says
    "30 op call(s)" once, and so do the merged steps, op shapes and summary (each rank's
    line was repeated)."""
    from gpuviz.analysis.rank_parts import merge_parts, rank_part

    def impossible(i: int, doc: dict[str, Any]) -> None:
        doc["traceEvents"] = [
            dict(e, args=dict(e["args"], flops=1e308)) if e.get("name") == "aten::mm" else e
            for e in doc["traceEvents"]
        ]

    folder = _job(tmp_path, DATA / "roofline" / "roofline.json.gz", [0, 1], impossible)
    mm = sum(
        1
        for e in json.loads(gzip.decompress((DATA / "roofline" / "roofline.json.gz").read_bytes()))[
            "traceEvents"
        ]
        if e.get("name") == "aten::mm"
    )
    whole = hardware(load_trace(folder, cache=False)).warnings
    assert len(whole) == 1 and whole[0].startswith(f"{2 * mm} op call(s) with a recorded")
    assert _merged(folder, "step")["flop_warnings"] == whole
    parts = [rank_part(import_trace(str(f), max_memory=0).prepare()) for f in trace_files(folder)]
    merged = merge_parts(parts)
    assert merged is not None and merged[1].warnings == whole

    def too_large(i: int, doc: dict[str, Any]) -> None:
        """One GEMM a rank with a shape no tensor has: skipped, counted."""
        first = next(k for k, e in enumerate(doc["traceEvents"]) if e.get("name") == "aten::mm")
        e = doc["traceEvents"][first]
        doc["traceEvents"] = list(doc["traceEvents"])
        doc["traceEvents"][first] = dict(
            e, args=dict(e["args"], **{"Input Dims": [[10**10] * 2] * 2})
        )

    other = tmp_path / "other"
    other.mkdir()
    folder = _job(other, DATA / "roofline" / "roofline.json.gz", [0, 1], too_large)
    got = _merged(folder, "op-shape")
    assert got == _whole(folder, "op-shape")
    assert len(got["flop_warnings"]) == 1 and got["flop_warnings"][0].startswith("2 op call(s)")


def test_flops_summed_past_2_53_are_not_merged() -> None:
    """A rank's FLOPs are a float sum made int: below 2**53 the ranks' sums are the
    folder's, past it the folder's running sum need not be (op and op-shape rows alike)."""
    row = BreakdownRow("aten::mm", 2, 10, 20, 30, 40, flops=2**52)
    half = dataclasses.replace(row, flops=2**51)
    merged = merge_breakdown([_part([row], "/j/r0.json", 0), _part([half], "/j/r1.json", 1)])
    assert isinstance(merged, MergedBreakdown) and merged.table.rows[0].flops == 3 * 2**51
    why = merge_breakdown([_part([row], "/j/r0.json", 0), _part([row], "/j/r1.json", 1)])
    assert isinstance(why, str) and "2**53" in why


def test_files_of_two_jobs_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    for f in trace_files(DATA / "ddp_2rank"):
        shutil.copy(f, folder / Path(f).name)
    shutil.copy(DATA / "nccl_2rank_h200" / "rank-0.json.gz", folder / "rank-2.json.gz")
    with pytest.raises(NotOneJobError):
        merge_breakdown(_parts(folder, "op"))


def test_a_folder_without_stacks_says_so_for_lines() -> None:
    m = merge_breakdown(_parts(DATA / "ddp_2rank", "line"))
    assert isinstance(m, MergedBreakdown) and m.no_stacks and not m.table.rows
