"""``gpuviz profile --compile-info``: Inductor's provenance beside the trace (issue 49), on the
CPU build (Inductor compiles C++ kernels there; the files have the same form)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuviz.analysis.inductor_provenance import read_compile_info, sibling_folder
from gpuviz.engine.compile_info import compile_info_folder, enable_compile_info

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def test_settings_are_undone(tmp_path: Path) -> None:
    import torch._inductor.config as ic

    before = (
        ic.trace.enabled,
        ic.trace.debug_dir,
        ic.trace.provenance_tracking_level,
        ic.force_disable_caches,
        ic.post_grad_custom_post_pass,
    )
    undo = enable_compile_info(tmp_path / "ci")
    assert ic.trace.enabled and ic.trace.provenance_tracking_level == 1 and ic.force_disable_caches
    assert ic.trace.debug_dir == str((tmp_path / "ci").resolve())
    assert ic.post_grad_custom_post_pass is not None
    undo()
    after = (
        ic.trace.enabled,
        ic.trace.debug_dir,
        ic.trace.provenance_tracking_level,
        ic.force_disable_caches,
        ic.post_grad_custom_post_pass,
    )
    assert after == before


def test_folder_beside_the_trace(tmp_path: Path) -> None:
    # What profile writes is what the readers look for.
    for i, (name, want) in enumerate(
        (("run.json.gz", "run.compile"), ("run.json", "run.compile"), ("ranks", "ranks.compile"))
    ):
        base = tmp_path / str(i)
        base.mkdir()
        folder = compile_info_folder(base / name)
        assert folder == base / want
        folder.mkdir()
        assert sibling_folder(base / name) == folder


@pytest.mark.slow
def test_profile_writes_compile_info(tmp_path: Path) -> None:
    from test_cli_profile import profile

    out = tmp_path / "run.json.gz"
    r = profile(
        "--compile-info", "--stop", "--skip", "1", "--warmup", "1", "--active", "1",
        "--out", str(out), "compiled_tiny.py",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert out.is_file()
    info = read_compile_info(tmp_path / "run.compile")
    assert [g.backward for g in info.graphs] == [False, True]
    fwd = info.graphs[0]
    # The model's three Linears, one GEMM each, each on its own module (Class_N as eager).
    mods = [info.module_path(fwd.module_of(c) or ()) for c in fwd.calls if c.extern]
    assert mods == ["Block_0.Linear_0", "Block_1.Linear_1", "Linear_2"]
    lines = {fwd.line_of(c) for c in fwd.calls}
    assert any(str(x).endswith("compiled_tiny.py:14") for x in lines)  # Block.forward
