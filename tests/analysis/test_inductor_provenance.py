"""Reading Inductor's compile-info folder, checked against what torch 2.13 (CPU) wrote for the
model of scripts/compile_info_cpu.py: two blocks (LayerNorm, Mlp: fc, gelu, proj) and a Linear
head, whose structure is the independent truth here."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from gpuviz.analysis.inductor_provenance import (
    CompileInfoError,
    read_compile_info,
    sibling_folder,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "compile" / "cpu_tiny"
SCRIPT_LINE = "scripts/compile_info_cpu.py:{}"
MLP_LINE, BLOCK_LINE, HEAD_LINE = 25, 35, 47  # the forward lines of Mlp, Block and Tiny


def _modules(info, graph):  # type: ignore[no-untyped-def]
    out = []
    for c in graph.calls:
        stack = graph.module_of(c)
        out.append(info.module_path(stack) if stack else None)
    return out


def test_graphs_in_compile_order_forward_then_backward() -> None:
    info = read_compile_info(DATA)
    assert [g.folder for g in info.graphs] == ["model__0_forward_1.0", "model__0_backward_3.1"]
    assert [g.backward for g in info.graphs] == [False, True]


def test_instance_names_follow_eager_numbering() -> None:
    # The profiler names module frames Class_N in call order: blocks[0] before blocks[1].
    info = read_compile_info(DATA)
    names = {q.split(".", 1)[1] if "." in q else q: n for q, n in info.instance.items()}
    assert names == {
        "blocks.0": "Block_0",
        "blocks.0.ln": "LayerNorm_0",
        "blocks.0.mlp": "Mlp_0",
        "blocks.0.mlp.fc": "Linear_0",
        "blocks.0.mlp.proj": "Linear_1",
        "blocks.1": "Block_1",
        "blocks.1.ln": "LayerNorm_1",
        "blocks.1.mlp": "Mlp_1",
        "blocks.1.mlp.fc": "Linear_2",
        "blocks.1.mlp.proj": "Linear_3",
        "head": "Linear_4",
    }


def test_forward_calls_in_order_with_their_modules() -> None:
    info = read_compile_info(DATA)
    fwd = info.graphs[0]
    externs = [c for c in fwd.calls if c.extern]
    # One addmm per Linear: fc and proj of each block, then the head, in call order.
    assert [c.base for c in externs] == ["addmm"] * 5
    mods = _modules(info, fwd)
    assert [m for c, m in zip(fwd.calls, mods, strict=True) if c.extern] == [
        "Block_0.Mlp_0.Linear_0",
        "Block_0.Mlp_0.Linear_1",
        "Block_1.Mlp_1.Linear_2",
        "Block_1.Mlp_1.Linear_3",
        "Linear_4",
    ]
    # The gelu kernel is one piece of code called twice: each call keeps its own block.
    gelu = [m for c, m in zip(fwd.calls, mods, strict=True) if c.name == "cpp_fused_gelu_view_1"]
    assert gelu == ["Block_0.Mlp_0", "Block_1.Mlp_1"]
    assert fwd.calls[0].name == "cpp_fused_native_layer_norm_0"
    assert mods[0] == "Block_0.LayerNorm_0"


def test_backward_has_two_gemms_per_linear() -> None:
    # Each Linear's backward is two mm: the input's gradient and the weight's.
    info = read_compile_info(DATA)
    bwd = info.graphs[1]
    mods = _modules(info, bwd)
    per = Counter(m for c, m in zip(bwd.calls, mods, strict=True) if c.extern)
    assert per == {
        "Linear_4": 2,
        "Block_1.Mlp_1.Linear_3": 2,
        "Block_1.Mlp_1.Linear_2": 2,
        "Block_0.Mlp_0.Linear_1": 2,
        "Block_0.Mlp_0.Linear_0": 2,
    }
    # Backward kernels name their nodes (Inductor's own mappings file has no backward graph).
    assert all(c.nodes for c in bwd.calls)


def test_lines_are_the_model_source_lines() -> None:
    info = read_compile_info(DATA)
    fwd = info.graphs[0]
    lines = [fwd.line_of(c) for c in fwd.calls]
    assert all(x is not None for x in lines)
    by_name = dict(zip((c.name for c in fwd.calls), lines, strict=False))
    assert by_name["cpp_fused_gelu_view_1"].endswith(SCRIPT_LINE.format(MLP_LINE))
    assert by_name["cpp_fused_native_layer_norm_0"].endswith(SCRIPT_LINE.format(BLOCK_LINE))
    assert lines[-1].endswith(SCRIPT_LINE.format(HEAD_LINE))


def test_inductor_mappings_file_alone_serves_forward_graphs(tmp_path: Path) -> None:
    # Without gpuviz's files (TORCH_COMPILE_DEBUG=1 INDUCTOR_PROVENANCE=1 only): nodes from
    # Inductor's mappings file, no module stacks, lines from the readable graph.
    g = tmp_path / "torchinductor" / "model__0_forward_1.0"
    g.mkdir(parents=True)
    src = DATA / "torchinductor" / "model__0_forward_1.0"
    for f in (
        "output_code.py",
        "fx_graph_readable.py",
        "inductor_provenance_tracking_node_mappings.json",
    ):
        shutil.copy(src / f, g / f)
    info = read_compile_info(tmp_path)
    fwd = info.graphs[0]
    assert len(fwd.calls) == 11 and all(c.nodes for c in fwd.calls)
    assert fwd.module_of(fwd.calls[0]) is None
    assert str(fwd.line_of(fwd.calls[2])).endswith(SCRIPT_LINE.format(MLP_LINE))


def test_bad_folders(tmp_path: Path) -> None:
    with pytest.raises(CompileInfoError, match="not a folder"):
        read_compile_info(tmp_path / "missing")
    with pytest.raises(CompileInfoError, match="no compiled graph"):
        read_compile_info(tmp_path)


def test_sibling_folder(tmp_path: Path) -> None:
    trace = tmp_path / "run.json.gz"
    trace.write_bytes(b"")
    assert sibling_folder(trace) is None
    (tmp_path / "run.compile").mkdir()
    assert sibling_folder(trace) == tmp_path / "run.compile"


def test_gzipped_files_read_alike(tmp_path: Path) -> None:
    import gzip

    plain = read_compile_info(DATA)
    for src in DATA.rglob("*"):
        if src.is_file():
            dst = tmp_path / src.relative_to(DATA)
            dst.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(dst.with_name(dst.name + ".gz"), "wb") as f:
                f.write(src.read_bytes())
    packed = read_compile_info(tmp_path)
    assert [g.calls for g in packed.graphs] == [g.calls for g in plain.graphs]
    assert [g.lines for g in packed.graphs] == [g.lines for g in plain.graphs]
    assert packed.instance == plain.instance


def test_call_site_comments_serve_backward_graphs_alone(tmp_path: Path) -> None:
    # TORCH_COMPILE_DEBUG=1 alone: a backward graph has no mappings file; each call's own
    # "Source Nodes" comment names its nodes, and the readable graph their lines.
    g = tmp_path / "torchinductor" / "model__0_backward_3.1"
    g.mkdir(parents=True)
    src = DATA / "torchinductor" / "model__0_backward_3.1"
    for f in ("output_code.py", "fx_graph_readable.py"):
        shutil.copy(src / f, g / f)
    bwd = read_compile_info(tmp_path).graphs[0]
    externs = [c for c in bwd.calls if c.extern]
    assert len(externs) == 10 and all(c.nodes for c in externs)
    # The first two GEMMs are the head's (the last Linear runs first backward).
    assert [str(bwd.line_of(c)).endswith(SCRIPT_LINE.format(HEAD_LINE)) for c in externs[:2]] == [
        True,
        True,
    ]
    assert str(bwd.line_of(externs[2])).endswith(SCRIPT_LINE.format(MLP_LINE))
