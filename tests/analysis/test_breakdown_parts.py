"""A rank folder's breakdown made from its ranks' rows (:mod:`gpuviz.analysis.breakdown_parts`,
``breakdown DIR --cluster``, issue 51) is the folder read whole's, to the last digit: rows,
order, device time in no row, sources and import warnings; the kernel table's sums match the
raw events of the files counted here; a step table's FLOPs and MFU and its rank labels match
the whole folder's (ranks declared against file order too); a module table's rows, FLOPs, MFU
and notes match the whole folder's on ranks of different models; where the ranks cannot be
merged exactly (different peaks, FLOPs known on some ranks only, FLOPs not whole numbers, graph
launches, module frames on some ranks only) the merge says why instead; module and op FLOPs
past 2**53 are the exact sums of the ranks' (tests/analysis/test_op_flops_exact.py: op and
op-shape tables)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from module_ranks import module_calls, write_module_job

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_parts import (
    BreakdownPart,
    MergedBreakdown,
    breakdown_part,
    merge_breakdown,
)
from gpuviz.analysis.breakdown_table import BreakdownRow
from gpuviz.analysis.hardware import annotate_breakdown, hardware
from gpuviz.analysis.module_flops import annotate_modules
from gpuviz.analysis.step_flops import NO_SHAPES
from gpuviz.report.peaks import peak_phrase
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
    if by == "module":  # as gpuviz breakdown fills them (commands.breakdown.add_hardware_columns)
        hw = hardware(trace, None)
        annotate_modules(table, hw, attribute(trace))
    return {
        "rows": [r.to_json(by) for r in table.rows],
        "unattributed": table.unattributed_device_ns,
        "sources": list(trace.sources),
        "warnings": list(trace.warnings.samples),
        "peaks": None if hw is None else hw.peak_json(),
        "flop_warnings": None if hw is None else hw.warnings,
        "peak_phrase": None if hw is None else peak_phrase(hw),
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
        "peak_phrase": None if m.hardware is None else peak_phrase(m.hardware),
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


def test_op_shape_flop_warnings_of_the_ranks_are_counted_once_for_the_folder(
    tmp_path: Path,
) -> None:
    """One GEMM a rank with a shape no tensor has: skipped on each, one line for both."""

    def too_large(i: int, doc: dict[str, Any]) -> None:
        """One GEMM a rank with a shape no tensor has: skipped, counted."""
        first = next(k for k, e in enumerate(doc["traceEvents"]) if e.get("name") == "aten::mm")
        e = doc["traceEvents"][first]
        doc["traceEvents"] = list(doc["traceEvents"])
        doc["traceEvents"][first] = dict(
            e, args=dict(e["args"], **{"Input Dims": [[10**10] * 2] * 2})
        )

    folder = _job(tmp_path, DATA / "roofline" / "roofline.json.gz", [0, 1], too_large)
    got = _merged(folder, "op-shape")
    assert got == _whole(folder, "op-shape")
    assert len(got["flop_warnings"]) == 1 and got["flop_warnings"][0].startswith("2 op call(s)")


def test_op_flops_past_2_53_are_summed_exactly_and_floats_are_not_merged() -> None:
    """A rank's op FLOPs are exact ints (whole-number counts summed in parts): the folder's
    row is their int sum past 2**53 too, where float64 would round; a row whose FLOPs are a
    float sum of counts that are not whole numbers is declined (op and op-shape rows alike)."""
    row = BreakdownRow("aten::mm", 2, 10, 20, 30, 40, flops=2**52 + 1)
    other = dataclasses.replace(row, flops=2**52 + 2)
    merged = merge_breakdown([_part([row], "/j/r0.json", 0), _part([other], "/j/r1.json", 1)])
    assert isinstance(merged, MergedBreakdown)
    assert merged.table.rows[0].flops == 2**53 + 3 != int(float(2**52 + 1) + float(2**52 + 2))
    floats = dataclasses.replace(row, flops_exact=False)
    why = merge_breakdown([_part([row], "/j/r0.json", 0), _part([floats], "/j/r1.json", 1)])
    assert isinstance(why, str) and "whole numbers" in why


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


@pytest.fixture(scope="module")
def module_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two ranks of different TinyLM runs with stacks, modules and shapes (tests/module_ranks.py)."""
    return write_module_job(tmp_path_factory.mktemp("modules") / "job")


@pytest.mark.parametrize("name", STACKED)
def test_the_merged_module_table_of_ranks_without_modules_is_the_whole_folders(name: str) -> None:
    """Stacks but no nn.Module frames: outside rows only, with their FLOPs."""
    got = _merged(DATA / name, "module")
    assert got["rows"] and got == _whole(DATA / name, "module")


def test_the_merged_module_table_is_the_whole_folders(module_job: Path) -> None:
    """Rows, order, FLOPs, MFU, notes, peaks and the peaks line, to the last digit; the
    shared module paths sum both ranks' calls (counted here from the files' events)."""
    got, want = _merged(module_job, "module"), _whole(module_job, "module")
    assert got == want
    rows = {r["key"]: r for r in got["rows"]}
    assert rows["TinyLM_0"]["calls"] == module_calls(module_job, "TinyLM_0") > 0
    one = {r.key: r for r in _parts(module_job, "module")[0].rows}
    two = {r.key: r for r in _parts(module_job, "module")[1].rows}
    shared = [k for k in one if k in two and rows[k]["kind"] == "module"]
    assert len(shared) > 10
    for k in shared:  # each a sum of both ranks' (int ns: exact)
        assert rows[k]["calls"] == one[k].calls + two[k].calls
        assert rows[k]["device_total_us"] == round(
            (one[k].device_total_ns + two[k].device_total_ns) / 1000, 3
        )
    assert sum(r["mfu"] is not None for r in got["rows"]) > 10
    assert any(r["mfu_note"] for r in got["rows"])  # NO_FORMULA rows stay unknown
    # The merge has teeth: one rank's part alone is not the folder's table.
    alone = merge_breakdown(_parts(module_job, "module")[:1])
    assert isinstance(alone, MergedBreakdown)
    assert [r.to_json("module") for r in alone.table.rows] != want["rows"]


DDP = DATA / "ddp_modules_2rank"  # one DDP run of 2 ranks on an H100 (scripts/ddp_modules.py)


@pytest.mark.parametrize("by", ["module", "op-shape"])
def test_the_merged_tables_of_a_real_ddp_run_are_the_whole_folders(by: str) -> None:
    """Both ranks of one job have the same modules and shapes: every row sums two ranks."""
    got = _merged(DDP, by)
    assert got == _whole(DDP, by)
    assert sum(r["flops"] is not None and r["flops"] > 0 for r in got["rows"]) > 5


def test_the_merged_module_flops_of_a_real_ddp_run_are_the_hand_count() -> None:
    """2 ranks x 3 recorded steps of scripts/ddp_modules.py (batch 64, width 256, blocks of
    Linear 256->1024 and 1024->256, head 256->10), counted by hand: a Linear's forward is
    2·64·in·out, its backward twice that, except block 0's first Linear, whose input needs no
    grad (one GEMM less); the model adds the residual, 64·256 a block a forward."""
    rows = {r["key"]: r for r in _merged(DDP, "module")["rows"]}
    runs = 2 * 3
    gemm = 2 * 64 * 256 * 1024
    net = "DistributedDataParallel_0.Net_0"
    blocks = f"{net}.Sequential_0"
    assert rows[f"{blocks}.Block_0.Linear_0"]["flops"] == runs * 2 * gemm
    for linear in ("Block_0.Linear_1", "Block_1.Linear_2", "Block_1.Linear_3"):
        assert rows[f"{blocks}.{linear}"]["flops"] == runs * 3 * gemm
    head = 3 * 2 * 64 * 256 * 10
    assert rows[f"{net}.Linear_4"]["flops"] == runs * head
    residual = 2 * 64 * 256
    assert rows[net]["flops"] == runs * (11 * gemm + head + residual)
    assert rows[net]["calls"] == runs


def test_a_module_rows_flops_are_the_sum_of_each_ranks_own(module_job: Path) -> None:
    """Each file read alone (the table gpuviz prints for it) holds part of a shared row's
    FLOPs; the folder's row holds their sum and its MFU counts the sum over its device time."""
    alone = []
    for f in trace_files(module_job):
        trace = import_trace(str(f), max_memory=0).prepare()
        table = breakdown(trace, "module")
        annotate_modules(table, hardware(trace, None), attribute(trace))
        alone.append({r.key: r.extra for r in table.rows})
    rows = {r["key"]: r for r in _merged(module_job, "module")["rows"]}
    both = [k for k in alone[0] if k in alone[1] and alone[0][k]["flops"] and alone[1][k]["flops"]]
    assert both
    for k in both:
        assert rows[k]["flops"] == alone[0][k]["flops"] + alone[1][k]["flops"]


def _set_flops(value: float, ranks: tuple[int, ...] = (0, 1), step: int = 0) -> Any:
    """An edit that records Kineto's ``flops`` of ``value`` (plus ``step`` times the rank) on
    the first aten::mm of ``ranks``."""

    def edit(rank: int, doc: dict[str, Any]) -> None:
        if rank in ranks:
            mm = next(e for e in doc["traceEvents"] if e.get("name") == "aten::mm")
            mm["args"]["flops"] = value + step * rank

    return edit


def test_module_flops_past_2_53_are_exact_sums_of_the_ranks(tmp_path: Path) -> None:
    """Each rank's FLOPs below 2**53, the folder's above (about 9 PFLOP, a big job's): a
    float64 sum would depend on its order and round; the folder's rows, read whole and merged
    alike, are the exact int sums of the ranks' own (each exact in float64)."""
    folder = write_module_job(tmp_path / "big", edit=_set_flops(2**52 + 1, step=1))
    got, want = _merged(folder, "module"), _whole(folder, "module")
    assert got == want
    alone = []
    for f in trace_files(folder):
        trace = import_trace(str(f), max_memory=0).prepare()
        table = breakdown(trace, "module")
        annotate_modules(table, hardware(trace, None), attribute(trace))
        alone.append({r.key: r.extra["flops"] for r in table.rows})
    rows = {r["key"]: r["flops"] for r in got["rows"]}
    both = [k for k in alone[0] if alone[0][k] and alone[1].get(k)]
    for k in both:
        assert rows[k] == alone[0][k] + alone[1][k]
    # The test has teeth: a sum float64 cannot hold (a float path would print it rounded).
    assert any(rows[k] >= 2**53 and float(rows[k]) != rows[k] for k in both)


def test_module_flops_that_are_not_whole_numbers_are_not_merged(
    module_job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every FLOP formula and Kineto's count are whole numbers; a count that is not (a future
    formula's) is summed in float64, whose order the ranks' parts do not keep: declined."""
    import gpuviz.analysis.hardware as hardware_module

    real = hardware_module.hardware

    def halves(*args: Any, **kw: Any) -> Any:
        hw = real(*args, **kw)
        if "rank-1" in args[0].sources[0]:
            hw.calls.flops[np.flatnonzero(np.isfinite(hw.calls.flops))[0]] += 0.5
        return hw

    monkeypatch.setattr(hardware_module, "hardware", halves)
    why = merge_breakdown(_parts(module_job, "module"))
    assert isinstance(why, str) and "whole numbers" in why


@pytest.mark.parametrize("by", ["module", "step"])
def test_flop_warnings_of_the_ranks_are_counted_once_for_the_folder(
    tmp_path: Path, by: str
) -> None:
    """A recorded FLOP count no op does, on each rank: the folder's one line counts both."""
    folder = write_module_job(tmp_path / "job", edit=_set_flops(1e300))
    got, want = _merged(folder, by), _whole(folder, by)
    assert got == want
    assert [w.split(" ", 1)[0] for w in got["flop_warnings"]] == ["2"]


def test_modules_of_ranks_of_different_peaks_are_not_merged(tmp_path: Path) -> None:
    def bare(rank: int, doc: dict[str, Any]) -> None:
        if rank == 1:
            del doc["deviceProperties"]

    folder = write_module_job(tmp_path / "job", edit=bare)
    why = merge_breakdown(_parts(folder, "module"))
    assert isinstance(why, str) and "peaks" in why


def test_graph_launches_are_read_whole_for_modules(tmp_path: Path) -> None:
    graphs = DATA / "graphs" / "gpu" / "manual_graph.json.gz"
    folder = write_module_job(tmp_path / "job", (graphs, graphs))
    why = merge_breakdown(_parts(folder, "module"))
    assert isinstance(why, str) and "graph" in why


@pytest.mark.parametrize("by", ["module", "line"])
def test_module_frames_on_some_ranks_only_are_not_merged(
    tmp_path: Path, by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rank 1's module frames renamed away: the folder counts rank 1's forward time outside
    every module as "other", rank 1 alone as forward; so the sums would be wrong (shown by
    merging past the check) and the merge declines."""

    def no_modules(rank: int, doc: dict[str, Any]) -> None:
        if rank == 1:
            for e in doc["traceEvents"]:
                if str(e.get("name", "")).startswith("nn.Module: "):
                    e["name"] = "model.py(1): " + e["name"][len("nn.Module: ") :]

    folder = write_module_job(tmp_path / "job", edit=no_modules)
    parts = _parts(folder, by)
    why = merge_breakdown(parts)
    assert isinstance(why, str) and "nn.Module frames" in why
    for p in parts:
        p.module_frames = True  # past the check: the rows are not the folder's
    forced = merge_breakdown(parts)
    assert isinstance(forced, MergedBreakdown)
    assert [r.to_json(by) for r in forced.table.rows] != _whole(folder, by)["rows"]


def _no_shapes(ranks: tuple[int, ...]) -> Any:
    """An edit that drops the ops' shapes (as recorded without ``record_shapes``) on ``ranks``."""

    def edit(rank: int, doc: dict[str, Any]) -> None:
        if rank in ranks:
            for e in doc["traceEvents"]:
                for k in ("Input Dims", "Input type", "Concrete Inputs"):
                    e.get("args", {}).pop(k, None)

    return edit


def test_a_module_rows_flops_are_unknown_only_where_no_rank_counts_them(tmp_path: Path) -> None:
    """Rank 0 recorded without shapes: a row is unknown (NO_FORMULA) only where rank 1 holds no
    call of known FLOPs in it either; a shared module's FLOPs are rank 1's alone. Neither rank
    with shapes: every row says so (NO_SHAPES), as the folder read whole says."""
    folder = write_module_job(tmp_path / "one", edit=_no_shapes((0,)))
    got = _merged(folder, "module")
    assert got == _whole(folder, "module")
    rows = {r["key"]: r for r in got["rows"]}
    assert rows["TinyLM_0"]["flops"] and rows["TinyLM_0"]["mfu_note"] is None
    assert rows["TinyLM_0"]["calls"] == module_calls(folder, "TinyLM_0")
    none = write_module_job(tmp_path / "none", edit=_no_shapes((0, 1)))
    got = _merged(none, "module")
    assert got == _whole(none, "module")
    assert {r["mfu_note"] for r in got["rows"]} == {NO_SHAPES}
