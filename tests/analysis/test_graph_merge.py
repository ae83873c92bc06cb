"""The capture-and-replay merge on hand-made pairs: a capture trace (launches between
``hipStreamBeginCapture`` and ``hipStreamEndCapture``, inside ops, module frames and source
lines) and a run that replays the graph. Expected rows are counted by hand from the events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.graph_merge import align, merge_of
from gpuviz.trace.graph_captures import attach_captures
from gpuviz.trace.model import Trace
from tests.analysis.synthetic_trace import PID, k_annotation, k_kernel, k_op, k_py, kineto_trace


def runtime(name: str, ts: float, dur: float = 1, **args: Any) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": name,
        "pid": PID,
        "tid": 1,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def capture_events(graphs: list[list[tuple[str, str]]], named: bool = True) -> list[dict[str, Any]]:
    """One capture per graph; each launch is ``(kernel, module)``: inside ``nn.Module:
    <module>_0`` (a frame of line ``model.py(<n>): forward``) and an op ``op_<kernel>``."""
    ev: list[dict[str, Any]] = []
    t, corr = 0, 1
    for g, launches in enumerate(graphs):
        ev.append(runtime("hipStreamBeginCapture", t))
        t += 10
        for i, (kernel, module) in enumerate(launches):
            line = 100 + 10 * g + i
            ev.append(k_py(f"nn.Module: {module}_0", t, 40))
            ev.append(k_py(f"model.py({line}): forward", t + 1, 38))
            ev.append(k_op(f"op_{kernel}", t + 2, 30))
            args: dict[str, Any] = {"correlation": corr}
            if named:
                args.update(kernel=kernel, grid=[g + 1, 1, 1])
            ev.append(runtime("hipLaunchKernel", t + 5, 2, **args))
            t += 50
            corr += 1
        ev.append(runtime("hipStreamEndCapture", t))
        t += 100
    # Around every capture: the capturing code's line and a record_function range.
    ev.append(k_py("serve.py(1): capture_all", -5, t + 10))
    ev.append(k_annotation("capture_graphs", -4, t + 8))
    return ev


def replay_events(replays: list[list[str]], t0: float = 0) -> list[dict[str, Any]]:
    """Each replay: one ``hipGraphLaunch`` (under ``runner.py(5): replay``) and its kernels,
    10 µs each plus 1 µs per position (so each kernel's time is known)."""
    ev: list[dict[str, Any]] = []
    t = t0
    for r, kernels in enumerate(replays):
        ev.append(k_py("runner.py(5): replay", t, 20))
        ev.append(runtime("hipGraphLaunch", t + 2, 5, correlation=1000 + r))
        for i, k in enumerate(kernels):
            ev.append(k_kernel(k, t + 10 + 30 * i, 10 + i, corr=1000 + r))
        t += 1000
    return ev


def pair(
    tmp_path: Path,
    graphs: list[list[tuple[str, str]]],
    replays: list[list[str]],
    named: bool = True,
) -> Trace:
    capture = kineto_trace(capture_events(graphs, named), tmp_path, "capture.json")
    run = kineto_trace(replay_events(replays), tmp_path, "run.json")
    return attach_captures(run, [capture])


def rows(table: Breakdown) -> dict[str, tuple[int, int]]:
    return {r.key: (r.device_self_ns, r.device_total_ns) for r in table.rows}


GRAPH = [("gemm", "Attn"), ("relu", "Mlp"), ("add", "Mlp")]


def test_exact_replay_lands_on_capture_op_module_and_line(tmp_path: Path) -> None:
    trace = pair(tmp_path, [GRAPH], [["gemm", "relu", "add"]])
    ops = breakdown(trace, "op")
    assert rows(ops)["op_gemm"] == (10_000, 10_000)
    assert rows(ops)["op_relu"] == (11_000, 11_000)
    assert rows(ops)["op_add"] == (12_000, 12_000)
    assert ops.unattributed_device_ns == 0
    assert not [r for r in ops.rows if r.kind == "graph"]  # nothing left on the unit
    # The range around the capture holds every kernel in its total, none as its own.
    assert rows(ops)["capture_graphs"] == (0, 33_000)
    mods = breakdown(trace, "module")
    assert rows(mods)["Attn_0"] == (10_000, 10_000)
    assert rows(mods)["Mlp_0"] == (23_000, 23_000)
    mlp = next(r for r in mods.rows if r.key == "Mlp_0")
    assert (mlp.forward_device_ns, mlp.calls, mlp.extra["graph_device_us"]) == (23_000, 0, 23.0)
    lines = breakdown(trace, "line")
    got = rows(lines)
    assert got["model.py:100"] == (10_000, 10_000)
    assert got["model.py:101"] == (11_000, 11_000)
    assert got["model.py:102"] == (12_000, 12_000)
    assert got["serve.py:1"] == (0, 33_000)
    # The replay's own line keeps only its host time.
    assert got["runner.py:5"] == (0, 0)
    # Each row outlines its own kernel.
    k = lines.kernels_of(lines.rows.index(next(r for r in lines.rows if r.key == "model.py:101")))
    assert [trace.name_of(int(x)) for x in k] == ["relu"]


def test_reordered_kernels_keep_their_order_others_stay_on_the_unit(tmp_path: Path) -> None:
    # relu and add swapped: SequenceMatcher pairs gemm and one of them; the other is left.
    trace = pair(tmp_path, [GRAPH], [["gemm", "add", "relu"]])
    att = attribute(trace)
    m = merge_of(att)
    assert m is not None and len(m.kernel) == 2 and m.graph_kernels == 3
    ops = rows(breakdown(trace, "op"))
    assert ops["op_gemm"] == (10_000, 10_000)
    # One of add (11 µs here) / relu (12 µs) is matched; the other stays on the replay unit.
    matched = {k: v for k, v in ops.items() if k in ("op_add", "op_relu")}
    assert len(matched) == 1
    unit = ops["graph 1: 3 kernels"]
    assert sorted([next(iter(matched.values()))[0], unit[0]]) == [11_000, 12_000]


def test_missing_kernel_in_the_replay(tmp_path: Path) -> None:
    graph = [("gemm", "Attn"), ("softmax", "Attn"), ("relu", "Mlp"), ("add", "Mlp")]
    trace = pair(tmp_path, [graph], [["gemm", "relu", "add"]])
    ops = breakdown(trace, "op")
    got = rows(ops)
    assert (got["op_gemm"], got["op_relu"], got["op_add"]) == (
        (10_000, 10_000),
        (11_000, 11_000),
        (12_000, 12_000),
    )
    assert "op_softmax" not in got  # captured but not replayed: no row, no time
    assert ops.unattributed_device_ns == 0


def test_extra_kernel_in_the_replay_stays_on_its_unit(tmp_path: Path) -> None:
    trace = pair(tmp_path, [[("gemm", "Attn"), ("add", "Mlp")]], [["gemm", "memset_x", "add"]])
    ops = breakdown(trace, "op")
    got = rows(ops)
    assert got["op_gemm"] == (10_000, 10_000)
    assert got["op_add"] == (12_000, 12_000)
    assert got["graph 1: 3 kernels"] == (11_000, 11_000)  # the extra kernel
    assert ops.unattributed_device_ns == 0


def test_two_graphs_replayed_in_turn(tmp_path: Path) -> None:
    # Both graphs run a "gemm": which module it belongs to depends on the graph.
    enc = [("gemm", "Enc"), ("relu", "Enc")]
    dec = [("gemm", "Dec"), ("norm", "Dec"), ("add", "Dec")]
    trace = pair(tmp_path, [enc, dec], [["gemm", "relu"], ["gemm", "norm", "add"]] * 2)
    mods = rows(breakdown(trace, "module"))
    # Enc: (10 + 11) µs twice; Dec: (10 + 11 + 12) µs twice.
    assert mods["Enc_0"] == (42_000, 42_000)
    assert mods["Dec_0"] == (66_000, 66_000)
    lines = rows(breakdown(trace, "line"))
    assert lines["model.py:100"] == (20_000, 20_000)  # Enc's gemm, 2 replays
    assert lines["model.py:110"] == (20_000, 20_000)  # Dec's gemm, 2 replays
    assert lines["model.py:112"] == (24_000, 24_000)


def test_capture_without_kernel_names_aligns_by_order(tmp_path: Path) -> None:
    # CUDA's launch calls name no kernel: the merge pairs by position (kind of work).
    trace = pair(tmp_path, [GRAPH], [["k0", "k1", "k2"]], named=False)
    got = rows(breakdown(trace, "op"))
    assert (got["op_gemm"][0], got["op_relu"][0], got["op_add"][0]) == (10_000, 11_000, 12_000)


def test_grid_mismatch_is_counted(tmp_path: Path) -> None:
    trace = pair(tmp_path, [GRAPH], [["gemm", "relu", "add"]])
    m = merge_of(attribute(trace))
    # The replayed kernels record no grid: nothing to compare, nothing counted.
    assert m is not None and m.grid_mismatches == 0


def test_align_pairs() -> None:
    assert align(["a", "b", "c"], ["a", "b", "c"]) == [(0, 0), (1, 1), (2, 2)]
    assert align(["a", "b", "c", "d"], ["a", "c", "d"]) == [(0, 0), (2, 1), (3, 2)]
    assert align(["a", "b"], ["a", "x", "b"]) == [(0, 0), (1, 2)]
    assert align(["(kernel)", "(copy)"], ["gemm", "(copy)"]) == [(0, 0), (1, 1)]


def test_no_capture_no_change(tmp_path: Path) -> None:
    run = kineto_trace(replay_events([["gemm", "relu"]]), tmp_path, "run.json")
    assert merge_of(attribute(run)) is None
    assert rows(breakdown(run, "op")) == {"graph 1: 2 kernels": (21_000, 21_000)}


def test_a_trace_holding_its_own_capture(tmp_path: Path) -> None:
    # torch.cuda.graph captured inside the profiled window, then replayed twice: one file.
    ev = capture_events([GRAPH]) + replay_events([["gemm", "relu", "add"]] * 2, t0=10_000)
    trace = kineto_trace(ev, tmp_path)
    m = merge_of(attribute(trace))
    assert m is not None and (len(m.kernel), m.graph_kernels) == (6, 6)
    mods = rows(breakdown(trace, "module"))
    assert mods["Attn_0"] == (20_000, 20_000)
    assert mods["Mlp_0"] == (46_000, 46_000)


def graphed_kernel(
    name: str, ts: float, dur: float, corr: int, stream: int, node: int, graph: int
) -> dict[str, Any]:
    """A replayed kernel as newer Kineto writes it: with ``graph id`` and ``graph node id``."""
    k = k_kernel(name, ts, dur, corr=corr, stream=stream)
    k["args"].update({"graph id": graph, "graph node id": node})
    return k


def test_graph_node_ids_give_the_capture_order_across_streams(tmp_path: Path) -> None:
    # Captured gemm, relu, add; replayed on two streams so that by start time add runs first.
    capture = kineto_trace(capture_events([GRAPH]), tmp_path, "capture.json")
    ev = [
        runtime("hipGraphLaunch", 0, 5, correlation=900),
        graphed_kernel("gemm", 30, 10, 900, stream=7, node=1, graph=3),
        graphed_kernel("relu", 45, 11, 900, stream=7, node=2, graph=3),
        graphed_kernel("add", 10, 12, 900, stream=9, node=3, graph=3),
    ]
    run = attach_captures(kineto_trace(ev, tmp_path, "run.json"), [capture])
    m = merge_of(attribute(run))
    assert m is not None and len(m.kernel) == 3  # by start time only 2 of 3 would pair
    got = rows(breakdown(run, "op"))
    assert (got["op_gemm"][0], got["op_relu"][0], got["op_add"][0]) == (10_000, 11_000, 12_000)


def test_graph_ids_tell_graphs_apart(tmp_path: Path) -> None:
    # Two graphs with the same kernels: told apart by their graph id, not their names.
    ev = []
    for r, gid in enumerate([5, 6, 5]):
        ev.append(runtime("cudaGraphLaunch", r * 100, 5, correlation=r + 1))
        ev.append(graphed_kernel("gemm", r * 100 + 10, 10, r + 1, stream=7, node=1, graph=gid))
    from gpuviz.analysis.graph_replays import graph_replays

    r = graph_replays(attribute(kineto_trace(ev, tmp_path)))
    assert r.graph.tolist() == [1, 2, 1]


def test_advisor_evidence_names_the_captured_ops(tmp_path: Path) -> None:
    from gpuviz.analysis.advisor.findings import Evidence, Finding
    from gpuviz.analysis.advisor.where import with_code

    trace = pair(tmp_path, [GRAPH], [["gemm", "relu", "add"]])
    s = trace.slices
    start = min(int(s.start_ns[i]) for i in range(len(s)) if trace.name_of(i) == "gemm")
    # A range over relu and add only (gemm is 10 µs from start, relu at +30 µs, add at +60 µs).
    ev = Evidence(rank=None, device=0, start_ns=start + 25_000, end_ns=start + 80_000, stream=7)
    f = Finding("gpu_bound", "warning", "t", "d", "f", 1, "how", 0.5, evidence=(ev,))
    (out,) = with_code(trace, [f])
    got = out.evidence[0]
    assert got.ops == ("op_add", "op_relu")  # add (12 µs) weighs more than relu (11 µs)
    assert got.modules == ("Mlp_0",)
    assert got.lines == ("model.py:102", "model.py:101")
