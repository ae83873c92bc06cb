"""Attribution rules, one synthetic trace each: kernel -> launch -> op, the op tree, modules,
backward, source lines (times in µs in the events, ns in the tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import NoStacksError, breakdown
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.source_lines import classify
from tests.analysis.synthetic_trace import (
    k_annotation,
    k_fwdbwd,
    k_kernel,
    k_launch,
    k_op,
    k_py,
    kineto_trace,
)


def row(table: Breakdown, key: str) -> BreakdownRow:
    hits = [r for r in table.rows if r.key == key]
    assert len(hits) == 1, [r.key for r in table.rows]
    return hits[0]


def tables(events: list[dict[str, Any]], tmp_path: Path, by: str, **kw: Any) -> Breakdown:
    return breakdown(kineto_trace(events, tmp_path), by, **kw)


def test_nested_ops_self_and_total(tmp_path: Path) -> None:
    # aten::linear [0, 100] > aten::addmm [10, 90] > cudaLaunchKernel [20, 25] -> 30 µs kernel
    ev = [
        k_op("aten::linear", 0, 100),
        k_op("aten::t", 2, 5),
        k_op("aten::addmm", 10, 80),
        k_launch(20, corr=1, dur=5),
        k_kernel("gemm", 30, 30, corr=1),
    ]
    t = tables(ev, tmp_path, "op")
    lin, mm, tr = row(t, "aten::linear"), row(t, "aten::addmm"), row(t, "aten::t")
    assert (lin.calls, lin.cpu_total_ns, lin.cpu_self_ns) == (1, 100_000, 100_000 - 80_000 - 5_000)
    assert (lin.device_self_ns, lin.device_total_ns) == (0, 30_000)
    # The runtime call is a child of addmm in torch's tree: its time is not addmm's own.
    assert (mm.cpu_self_ns, mm.device_self_ns, mm.device_total_ns) == (75_000, 30_000, 30_000)
    # An op that launches nothing is a row with no device time.
    assert (tr.calls, tr.device_total_ns) == (1, 0)
    assert t.unattributed_device_ns == 0
    assert t.rows[0].key in ("aten::linear", "aten::addmm")  # sorted by device total
    assert t.kernels_of(t.rows.index(mm)).tolist() == attribute_rows(tmp_path, "gemm")


def attribute_rows(tmp_path: Path, name: str) -> list[int]:
    from gpuviz.trace.kineto import load_trace

    tr = load_trace(tmp_path / "t.json")
    a = attribute(tr)
    return [int(r) for r in a.gpu_rows if tr.name_of(int(r)) == name]


def test_driver_api_launch_is_attributed(tmp_path: Path) -> None:
    # cuBLASLt's nvjet GEMMs are launched with cuLaunchKernelEx (cuda_driver).
    ev = [
        k_op("aten::mm", 0, 50),
        k_launch(10, corr=5, driver=True),
        k_kernel("nvjet_tst_128x64", 20, 40, corr=5),
    ]
    t = tables(ev, tmp_path, "op")
    assert row(t, "aten::mm").device_self_ns == 40_000
    assert t.unattributed_device_ns == 0


def test_kernel_without_launch_in_window(tmp_path: Path) -> None:
    ev = [
        k_op("aten::add", 0, 10),
        k_launch(2, corr=1),
        k_kernel("add", 5, 3, corr=1),
        k_kernel("orphan", 20, 7, corr=99),  # its launch was before the profiled window
    ]
    t = tables(ev, tmp_path, "op")
    assert row(t, "aten::add").device_total_ns == 3_000
    assert t.unattributed_device_ns == 7_000
    k = tables(ev, tmp_path, "kernel")
    assert row(k, "orphan").device_total_ns == 7_000


def test_launch_under_annotation_only(tmp_path: Path) -> None:
    # torch links a kernel to the op around its launch; a record_function range is no op.
    ev = [
        k_annotation("Optimizer.step#AdamW.step", 0, 100),
        k_launch(10, corr=1),
        k_kernel("multi_tensor_apply", 20, 30, corr=1),
        k_op("aten::add_", 40, 20),
        k_launch(45, corr=2),
        k_kernel("add", 60, 10, corr=2),
    ]
    t = tables(ev, tmp_path, "op")
    ann = row(t, "Optimizer.step#AdamW.step")
    assert ann.kind == "annotation"
    assert (ann.device_self_ns, ann.device_total_ns) == (0, 10_000)
    assert ann.cpu_self_ns == 100_000 - 2_000 - 20_000
    assert t.unattributed_device_ns == 30_000


def test_profiler_step_rows_use_torch_name(tmp_path: Path) -> None:
    ev = [k_annotation("ProfilerStep#3", 0, 10), k_annotation("ProfilerStep#4", 10, 10)]
    t = tables(ev, tmp_path, "op")
    assert row(t, "ProfilerStep*").calls == 2


def test_op_shape_groups_by_input_dims(tmp_path: Path) -> None:
    ev = [
        k_op(
            "aten::mm", 0, 10, **{"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}
        ),
        k_op(
            "aten::mm", 20, 10, **{"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}
        ),
        k_op(
            "aten::mm", 40, 10, **{"Input Dims": [[8, 3], [3, 4]], "Input type": ["float", "float"]}
        ),
    ]
    t = tables(ev, tmp_path, "op-shape")
    got = sorted((r.calls, r.input_shapes) for r in t.rows)
    assert got == [(1, [[8, 3], [3, 4]]), (2, [[2, 3], [3, 4]])]
    assert all(r.input_types == ["float", "float"] for r in t.rows)
    assert row(tables(ev, tmp_path, "op"), "aten::mm").calls == 3


def test_kineto_flops_are_summed(tmp_path: Path) -> None:
    ev = [
        k_op("aten::mm", 0, 10, flops=1000),
        k_op("aten::mm", 20, 10, flops=500),
        k_op("aten::relu", 40, 10),
    ]
    t = tables(ev, tmp_path, "op")
    assert row(t, "aten::mm").flops == 1500
    assert row(t, "aten::relu").flops is None


def _model_events() -> list[dict[str, Any]]:
    """Forward on thread 1 inside modules, backward on thread 2, linked by fwdbwd flows.

    TinyLM_0 [0, 200] > Linear_0 called twice ([10, 60], [100, 150]); a loss op outside
    modules; backward ops on the autograd thread.
    """
    ev: list[dict[str, Any]] = [
        k_annotation("ProfilerStep#1", 0, 600),
        k_py("train.py(30): main", 0, 600, pid_=1, parent=None),
        k_py("nn.Module: TinyLM_0", 1, 198, pid_=2, parent=1),
        k_py("model.py(12): forward", 2, 196, pid_=3, parent=2),
    ]
    corr = 0
    for i, start in enumerate((10, 100)):
        ev += [
            k_py("nn.Module: Linear_0", start, 50, pid_=10 + i, parent=3),
            k_py(
                "torch/nn/modules/linear.py(125): forward",
                start + 1,
                48,
                pid_=20 + i,
                parent=10 + i,
            ),
            k_op("aten::linear", start + 2, 40, **{"Sequence number": 7 + i}),
            k_op("aten::addmm", start + 5, 30),
        ]
        corr += 1
        ev += [k_launch(start + 10, corr=corr), k_kernel("fwd_gemm", start + 20, 10, corr=corr)]
    # The loss, outside every module.
    ev += [k_op("aten::cross_entropy_loss", 210, 20, **{"Sequence number": 9})]
    ev += [k_launch(215, corr=50), k_kernel("loss_kernel", 230, 4, corr=50)]
    # The optimizer, under a record_function range only.
    ev += [k_annotation("Optimizer.step#AdamW.step", 500, 50), k_op("aten::_foreach_add_", 505, 40)]
    ev += [k_launch(510, corr=60), k_kernel("adam", 520, 6, corr=60)]
    # Backward, autograd thread: one evaluate_function per forward op (loss first).
    t0 = 300
    for j, (fwd_ts, name, c) in enumerate(
        ((210, "NllLossBackward0", 70), (102, "AddmmBackward0", 71), (12, "AddmmBackward0", 72))
    ):
        s = t0 + 50 * j
        ev += [
            k_op(f"autograd::engine::evaluate_function: {name}", s, 40, tid=2),
            k_op(name, s + 1, 38, tid=2, **{"Sequence number": 9 - j}),
            k_op("aten::mm", s + 2, 30, tid=2),
            k_launch(s + 3, corr=c, tid=2),
            k_kernel("bwd_gemm", s + 10, 5 + j, corr=c),
        ]
        ev += k_fwdbwd(100 + j, fwd_ts, s + 1)
    # AccumulateGrad: backward with no forward op.
    ev += [
        k_op(
            "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 460, 20, tid=2
        ),
        k_launch(465, corr=80, tid=2),
        k_kernel("accumulate", 470, 2, corr=80),
    ]
    return ev


def test_modules_forward_backward_and_outside(tmp_path: Path) -> None:
    t = tables(_model_events(), tmp_path, "module")
    lm, lin = row(t, "TinyLM_0"), row(t, "TinyLM_0.Linear_0")
    # A module called twice is one path with two calls.
    assert (lin.calls, lin.kind) == (2, "module")
    assert lin.forward_device_ns == 20_000
    # Backward of each linear (6 and 7 µs) lands on the module of its forward op.
    assert lin.backward_device_ns == 6_000 + 7_000
    assert (lin.device_self_ns, lin.device_total_ns) == (33_000, 33_000)
    assert (lm.device_self_ns, lm.device_total_ns) == (0, 33_000)
    assert lm.cpu_total_ns == 198_000 and lm.cpu_self_ns == 198_000 - 100_000
    loss = row(t, "aten::cross_entropy_loss")
    # Outside every module's forward: "other", not forward (issue 47, item 12); its backward
    # is still backward.
    assert (loss.kind, loss.forward_device_ns, loss.backward_device_ns) == ("outside", 0, 5_000)
    assert loss.other_device_ns == 4_000
    opt = row(t, "Optimizer.step#AdamW.step")
    assert (opt.kind, opt.forward_device_ns, opt.calls) == ("outside", 0, 1)
    assert opt.other_device_ns == 6_000
    assert (lin.other_device_ns, lm.other_device_ns) == (0, 0)
    acc = row(t, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")
    assert (acc.backward_device_ns, acc.forward_device_ns) == (2_000, 0)
    # Linked backward wrappers are counted with their forward op, not as rows of their own.
    assert not any(r.key.endswith("AddmmBackward0") for r in t.rows)
    total = sum(r.device_self_ns for r in t.rows)
    assert total == 20_000 + 4_000 + 6_000 + 5_000 + 6_000 + 7_000 + 2_000
    assert t.unattributed_device_ns == 0


def test_backward_by_sequence_number_without_flows(tmp_path: Path) -> None:
    ev = [e for e in _model_events() if e.get("cat") != "fwdbwd"]
    t = tables(ev, tmp_path, "module")
    assert row(t, "TinyLM_0.Linear_0").backward_device_ns == 13_000
    assert row(t, "aten::cross_entropy_loss").backward_device_ns == 5_000


def test_module_recursion_is_one_path(tmp_path: Path) -> None:
    ev = [
        k_py("nn.Module: Tree_0", 0, 100),
        k_py("nn.Module: Tree_0", 10, 50),
        k_op("aten::add", 20, 10),
        k_launch(22, corr=1),
        k_kernel("add", 40, 8, corr=1),
    ]
    t = tables(ev, tmp_path, "module")
    assert [r.key for r in t.rows] == ["Tree_0"]
    tree = t.rows[0]
    assert (tree.calls, tree.cpu_total_ns, tree.device_total_ns) == (2, 100_000, 8_000)


def test_missing_python_parent_id_falls_back_to_nesting(tmp_path: Path) -> None:
    ev = [
        k_py("nn.Module: Net_0", 0, 100),  # no Python id / parent id at all
        k_py("nn.Module: Block_0", 10, 50, pid_=5, parent=None),
        k_op("aten::relu", 20, 10),
        k_launch(22, corr=1),
        k_kernel("relu", 40, 8, corr=1),
    ]
    t = tables(ev, tmp_path, "module")
    assert row(t, "Net_0.Block_0").device_self_ns == 8_000
    assert row(t, "Net_0").device_total_ns == 8_000


def test_partial_overlap_is_not_nesting(tmp_path: Path) -> None:
    # A record_function range begun inside a Python frame that ends after it began.
    ev = [
        k_py("torch/profiler/profiler.py(821): step", 0, 20),
        k_annotation("ProfilerStep#1", 10, 100),
        k_op("aten::add", 30, 10),
    ]
    tr = kineto_trace(ev, tmp_path)
    a = attribute(tr)
    names = a.names(range(len(a.forest)))
    step, op = names.index("ProfilerStep#1"), names.index("aten::add")
    assert a.forest.parent[step] == -1
    assert a.forest.parent[op] == step
    assert row(breakdown(tr, "op"), "ProfilerStep*").cpu_self_ns == 90_000


def test_lines_default_and_mine(tmp_path: Path) -> None:
    ev = [
        k_py("train.py(10): main", 0, 100),
        k_py("transformers/trainer.py(2000): train", 1, 98),
        k_py("transformers/models/gpt2/modeling_gpt2.py(50): forward", 2, 96),
        k_py("nn.Module: Linear_0", 3, 94),
        k_py("torch/nn/modules/linear.py(125): forward", 4, 92),
        k_py("threading.py(300): wait", 5, 3),
        k_op("aten::linear", 10, 50),
        k_launch(20, corr=1),
        k_kernel("gemm", 30, 9, corr=1),
    ]
    tr = kineto_trace(ev, tmp_path)
    lines = breakdown(tr, "line")
    top = lines.rows[0]
    assert top.key == "transformers/models/gpt2/modeling_gpt2.py:50"
    assert (top.device_self_ns, top.forward_device_ns, top.backward_device_ns) == (9_000, 9_000, 0)
    assert row(lines, "train.py:10").device_total_ns == 9_000
    assert row(lines, "train.py:10").device_self_ns == 0
    assert not any(r.key.startswith(("torch/", "threading")) for r in lines.rows)
    mine = breakdown(tr, "line", mine=True)
    assert [r.key for r in mine.rows] == ["train.py:10"]
    assert mine.rows[0].device_self_ns == 9_000


def test_gpuviz_sampler_thread_is_never_a_line(tmp_path: Path) -> None:
    # gpuviz profile's memory sampler runs psutil and pynvml under the profiler: its frames,
    # on a thread of its own, are no line of the user's (they showed up in the Source view).
    ev = [
        k_py("train.py(10): main", 0, 100),
        k_op("aten::linear", 10, 50),
        k_launch(20, corr=1),
        k_kernel("gemm", 30, 9, corr=1),
        k_py("threading.py(1012): _bootstrap_inner", 0, 100, tid=2),
        k_py("gpuviz/engine/sampler.py(229): sample", 1, 90, tid=2),
        k_py("psutil/__init__.py(1129): memory_info", 2, 40, tid=2),
        k_py("pynvml.py(3822): nvmlDeviceGetMemoryInfo", 50, 30, tid=2),
        k_py("helper.py(5): f", 0, 10, tid=3),  # another thread, not gpuviz's: a line
    ]
    lines = breakdown(kineto_trace(ev, tmp_path), "line")
    assert sorted(r.key for r in lines.rows) == ["helper.py:5", "train.py:10"]
    assert row(lines, "train.py:10").device_self_ns == 9_000


def test_lines_backward_through_forward_op(tmp_path: Path) -> None:
    t = tables(_model_events(), tmp_path, "line")
    model = row(t, "model.py:12")
    assert (model.forward_device_ns, model.backward_device_ns) == (20_000, 13_000)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("torch/nn/modules/module.py(1751): _call_impl", "torch"),
        ("/usr/lib/python3.12/site-packages/torch/nn/functional.py(10): f", "torch"),
        ("/tmp/torchinductor_me/ab/cab.py(30): call", "torch"),
        ("threading.py(1032): _bootstrap", "stdlib"),
        ("multiprocessing/spawn.py(122): spawn_main", "stdlib"),
        ("transformers/models/bert/modeling_bert.py(364): forward", "third_party"),
        ("/venv/lib/python3.12/site-packages/mylib/x.py(3): g", "third_party"),
        ("train.py(30): main", "user"),
        ("/home/me/proj/model.py(12): forward", "user"),
    ],
)
def test_frame_classes(name: str, want: str) -> None:
    got = classify(name)
    assert got is not None and got[1] == want


@pytest.mark.parametrize(
    "name", ["nn.Module: Linear_0", "<built-in method add>", "<string>(1): <module>"]
)
def test_not_source_frames(name: str) -> None:
    assert classify(name) is None


def test_no_stacks_error(tmp_path: Path) -> None:
    ev = [k_op("aten::add", 0, 10)]
    tr = kineto_trace(ev, tmp_path)
    for by in ("module", "line"):
        with pytest.raises(NoStacksError, match="with_stack=True"):
            breakdown(tr, by)
    assert breakdown(tr, "op").rows[0].key == "aten::add"


def test_steps_table(tmp_path: Path) -> None:
    ev = [
        k_annotation("ProfilerStep#1", 0, 100),
        k_op("aten::add", 10, 20),
        k_launch(12, corr=1),
        k_kernel("add", 40, 5, corr=1),
        k_annotation("ProfilerStep#2", 100, 100),
        k_op("aten::mul", 110, 20),
        k_launch(112, corr=2),
        k_kernel("mul", 140, 7, corr=2),
    ]
    t = tables(ev, tmp_path, "step")
    assert [r.key for r in t.rows] == ["ProfilerStep#1", "ProfilerStep#2"]
    assert [r.device_total_ns for r in t.rows] == [5_000, 7_000]
    assert [r.cpu_self_ns for r in t.rows] == [80_000, 80_000]
    assert all(r.duration_ns and r.duration_ns >= 100_000 for r in t.rows)


def test_kernel_origins(tmp_path: Path) -> None:
    from gpuviz.analysis.origin import kernel_origins

    tr = kineto_trace(_model_events(), tmp_path)
    a = attribute(tr)
    names = tr.symbols.lookup(tr.slices.name[a.gpu_rows])
    got = dict(zip(names, kernel_origins(tr, a.gpu_rows)))
    fwd, bwd = got["fwd_gemm"], got["bwd_gemm"]
    assert fwd is not None and (fwd.op, fwd.module, fwd.line) == (
        "aten::addmm",
        "TinyLM_0.Linear_0",
        "model.py:12",
    )
    assert bwd is not None and bwd.backward and bwd.op == "aten::mm"
    assert got["adam"] is not None and got["adam"].module == "Optimizer.step#AdamW.step"
    assert kernel_origins(tr, [int(a.forest.rows[0])]) == [None]  # not a kernel


def test_mine_falls_back_without_user_frames(tmp_path: Path) -> None:
    ev = [
        k_py("transformers/models/gpt2/modeling_gpt2.py(50): forward", 0, 100),
        k_op("aten::mm", 10, 50),
        k_launch(20, corr=1),
        k_kernel("gemm", 30, 9, corr=1),
    ]
    mine = tables(ev, tmp_path, "line", mine=True)
    assert [r.key for r in mine.rows] == ["transformers/models/gpt2/modeling_gpt2.py:50"]


def test_python_frame_that_lost_its_exit(tmp_path: Path) -> None:
    # torch.compile's FunctionMeta.apply: its exit lost, the tracer closed it at the window's
    # end. It must not swallow the loss computed after the module returned.
    ev = [
        k_py("train.py(10): main", 0, 1000, pid_=1, parent=None),
        k_py("nn.Module: Net_0", 10, 90, pid_=2, parent=1),
        k_py("<built-in method apply of FunctionMeta object>", 50, 950, pid_=3, parent=2),
        k_op("CompiledFunction", 55, 40),
        k_launch(60, corr=1),
        k_kernel("triton_fused", 70, 5, corr=1),
        k_op("aten::cross_entropy_loss", 200, 50),
        k_launch(210, corr=2),
        k_kernel("loss", 220, 3, corr=2),
    ]
    t = tables(ev, tmp_path, "module")
    assert row(t, "Net_0").device_total_ns == 5_000
    assert (
        row(t, "aten::cross_entropy_loss").kind,
        row(t, "aten::cross_entropy_loss").device_total_ns,
    ) == ("outside", 3_000)


def test_an_attributed_trace_is_freed_when_nothing_else_holds_it() -> None:
    # The attribution used to be kept in a module-level table whose value refers to its
    # trace, so every attributed trace (and its cache files' descriptors) lived forever: a
    # closed tab's too.
    import gc
    import weakref

    from gpuviz.trace.kineto import load_trace

    data = Path(__file__).parents[1] / "data"
    trace = load_trace(data / "attribution" / "tinylm_train.json.gz")
    first = attribute(trace)
    assert attribute(trace) is first  # computed once while the trace lives
    gone = weakref.ref(trace)
    del trace, first
    gc.collect()
    assert gone() is None
