"""A compiled model's kernels on its lines and modules, on the H100 recording (issue 49).

Data recorded by the lead on the device machine (scripts/gpu/record_round4.py, tests/data/
compile/gpu/README.md): ``compile/gpu/gpt_compile.json.gz`` (the TinyLM of
scripts/gpu/record_attribution.py trained under ``torch.compile``, default mode, stacks and
module frames on) with Inductor's compile-info folder (``gpt_compile.compile/`` or
``gpt_compile_info/``), and the same model eager (``gpt_eager.json.gz`` here or in
``graphs/gpu/``). The eager run is the independent truth for modules: its module frames are
the profiler's own. Skipped while the files are absent; the module checks also while the
folder has no module stacks (recorded without gpuviz's pass: ``enable_compile_info``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.compiled_regions import COMPILE_INFO, attach_compile_info, compiled_origins
from gpuviz.analysis.inductor_provenance import CompileInfo, read_compile_info
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Trace

DATA = Path(__file__).resolve().parents[1] / "data"
GPU = DATA / "compile" / "gpu"
COMPILED = GPU / "gpt_compile.json.gz"
INFO = next(
    (p for p in (GPU / "gpt_compile.compile", GPU / "gpt_compile_info") if p.is_dir()), None
)
EAGER = next(
    (
        p
        for p in (GPU / "gpt_eager.json.gz", DATA / "graphs" / "gpu" / "gpt_eager.json.gz")
        if p.is_file()
    ),
    None,
)
MODEL_FILE = "record_attribution.py"
BLOCK = re.compile(r"(?:^|\.)(Block_\d+)$")

pytestmark = pytest.mark.skipif(
    not COMPILED.is_file() or INFO is None,
    reason="needs tests/data/compile/gpu/gpt_compile.json.gz and its compile-info folder, "
    "recorded on the device machine by the lead (scripts/gpu/record_round4.py)",
)


def _compiled() -> tuple[Trace, CompileInfo]:
    assert INFO is not None
    trace, info = load_trace(COMPILED), read_compile_info(INFO)
    attach_compile_info(trace, info)
    return trace, info


def _has_modules(info: CompileInfo) -> bool:
    return bool(info.instance)


def test_compiled_kernels_land_on_model_lines() -> None:
    trace, info = _compiled()
    att = attribute(trace)
    origins = compiled_origins(att, info)
    compiled = origins.call >= 0  # launched inside a compiled graph's range
    dur = att.gpu_dur_ns.astype(np.float64)
    assert compiled.any()
    on_line = compiled & (origins.source == COMPILE_INFO) & (origins.line >= 0)
    model = np.array(
        [
            origins.lines[i].rpartition(":")[0].endswith(MODEL_FILE) if i >= 0 else False
            for i in origins.line.tolist()
        ]
    )
    share = dur[on_line & model].sum() / dur[compiled].sum()
    assert share >= 0.95, f"{share:.1%} of the compiled graphs' device time on a model line"
    # The line table: what the calling line kept is what no line was found for.
    lines = breakdown(trace, "line")
    model_rows = [
        r for r in lines.rows if r.key.startswith(MODEL_FILE) and "compiled_in" in r.extra
    ]
    assert sum(r.device_self_ns for r in model_rows) == pytest.approx(
        dur[on_line & model].sum(), rel=1e-6
    )


def _block_share(table: Breakdown) -> dict[str, float]:
    """Each block's forward + backward device time over all the blocks' time."""
    blocks = {}
    for r in table.rows:
        m = BLOCK.search(r.key)
        if r.kind == "module" and m:
            blocks[m.group(1)] = (r.forward_device_ns or 0) + (r.backward_device_ns or 0)
    total = sum(blocks.values())
    assert total > 0
    return {k: v / total for k, v in blocks.items()}


def test_compiled_kernels_land_on_model_modules() -> None:
    trace, info = _compiled()
    if not _has_modules(info):
        pytest.skip("the compile-info folder has no module stacks: record with gpuviz's pass")
    att = attribute(trace)
    origins = compiled_origins(att, info)
    compiled = origins.call >= 0
    dur = att.gpu_dur_ns.astype(np.float64)
    placed = compiled & (origins.source == COMPILE_INFO) & (origins.module >= 0)
    share = dur[placed].sum() / dur[compiled].sum()
    assert share >= 0.95, f"{share:.1%} of the compiled graphs' device time on a model module"


def test_each_block_like_eager() -> None:
    trace, info = _compiled()
    if not _has_modules(info) or EAGER is None:
        pytest.skip("needs module stacks in the compile-info folder and the eager recording")
    compiled = _block_share(breakdown(trace, "module"))
    eager = _block_share(breakdown(load_trace(EAGER), "module"))
    assert compiled.keys() == eager.keys()
    for block, e in eager.items():
        assert abs(compiled[block] - e) <= 0.10 * e, (block, compiled[block], e)


def _steps_json(trace: Trace) -> list[dict[str, object]]:
    from gpuviz.analysis.hardware import hardware

    return [s.to_json() for s in hardware(trace).steps]


def test_compiled_step_flops_match_eager_and_torch() -> None:
    # Truths: torch's FlopCounterMode of one eager step (truth.json), and the FLOPs gpuviz
    # counts on the eager recording of the same model, per step (the profiled traces hold
    # several steps of one shape each).
    from gpuviz.analysis.step_flops import MIN_COVERAGE

    truth = json.loads((GPU / "truth.json").read_text())["flop_counter_total"]
    bare = _steps_json(load_trace(COMPILED))  # generated kernels' FLOPs unknown
    trace, _ = _compiled()
    steps = _steps_json(trace)
    assert len(steps) == len(bare) >= 2
    # Each eager step counts the same FLOPs (one shape): its median is the eager figure.
    eager = [s["flops"] for s in _steps_json(load_trace(EAGER))] if EAGER is not None else []
    assert all(isinstance(e, int) for e in eager)
    e = float(np.median(np.asarray(eager, dtype=np.float64))) if eager else None
    for i, s in enumerate(steps):
        flops = s["flops"]
        assert isinstance(flops, int)
        assert abs(flops - truth) <= 0.05 * truth, (i, flops, truth)
        assert e is None or abs(flops - e) <= 0.05 * e, (i, flops, e)
        # The generated kernels now count as known: the coverage rises past MIN_COVERAGE
        # and the MFU is a figure (it was null with their FLOPs unknown).
        before, after = bare[i]["flops_coverage"], s["flops_coverage"]
        assert isinstance(before, float) and isinstance(after, float)
        assert before < MIN_COVERAGE <= after, (before, after)
        assert bare[i]["mfu"] is None and s["mfu"] is not None


def test_every_generated_kernel_of_the_graphs_is_counted() -> None:
    from gpuviz.analysis.compiled_calls import add_compiled_calls
    from gpuviz.analysis.op_calls import count_calls

    trace, info = _compiled()
    calls, _, _ = add_compiled_calls(trace, *count_calls(trace))
    known = np.isfinite(calls.flops)
    counted = np.concatenate(
        [calls.sorted_gpu[a:b] for a, b in zip(calls.lo[known], calls.hi[known], strict=True)]
    )
    att = attribute(trace)
    compiled = compiled_origins(att, info).call >= 0
    missing = np.setdiff1d(att.gpu_rows[compiled], counted)
    assert len(missing) == 0, f"{len(missing)} kernels of the compiled graphs not counted"


def test_generated_kernels_have_a_bandwidth_share() -> None:
    # Each counted generated kernel is judged by its bytes (memory-bound: a known 0 FLOPs, a
    # cast, too): its share of the roof is a figure, at most 1 (bytes are a lower bound).
    from gpuviz.analysis.hardware import hardware
    from gpuviz.analysis.inductor_names import is_inductor_kernel

    trace, _ = _compiled()
    hw = hardware(trace)
    generated = np.array([is_inductor_kernel(hw.shapes[j].name) for j in hw.calls.shape.tolist()])
    assert generated.sum() > 100
    share = hw.calls.roof_share[generated]
    assert np.isfinite(share).all() and (share > 0).all() and (share <= 1).all()
    rows = [s for s in hw.shapes if is_inductor_kernel(s.name)]
    assert rows and all(s.bound == "memory" and not s.inconsistent for s in rows)
