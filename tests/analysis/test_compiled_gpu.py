"""A compiled model's kernels on its modules, against the same model run eagerly (issue 49).

Data the lead records on the device machine (tests/data/compile/gpu/; README there):
``gpt_compile.json.gz`` (the TinyLM of scripts/gpu/record_attribution.py trained under
``torch.compile``, default mode, ``record_shapes``/``with_stack``/``with_modules``) with its
compile-info folder ``gpt_compile.compile/`` beside it, and ``gpt_eager.json.gz`` (the same
model and steps, eager). The eager run is the independent truth: its module frames are the
profiler's own. Skipped while the files are absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.attribution import attribute
from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.compiled_regions import (
    COMPILE_INFO,
    attach_compile_info,
    compiled_origins,
)
from gpuviz.analysis.inductor_provenance import read_compile_info, sibling_folder
from gpuviz.trace.kineto import load_trace

GPU = Path(__file__).resolve().parents[1] / "data" / "compile" / "gpu"
COMPILED = GPU / "gpt_compile.json.gz"
EAGER = GPU / "gpt_eager.json.gz"
BLOCK = re.compile(r"(?:^|\.)(Block_\d+)$")

pytestmark = pytest.mark.skipif(
    not (COMPILED.is_file() and EAGER.is_file() and sibling_folder(COMPILED) is not None),
    reason="needs tests/data/compile/gpu/ (gpt_compile.json.gz, gpt_compile.compile/, "
    "gpt_eager.json.gz), recorded on the device machine by the lead",
)


def _compiled():  # type: ignore[no-untyped-def]
    trace = load_trace(COMPILED)
    folder = sibling_folder(COMPILED)
    assert folder is not None
    attach_compile_info(trace, read_compile_info(folder))
    return trace


def _block_share(table: Breakdown) -> dict[str, float]:
    """Each block's forward + backward device time over all the blocks' (model) time."""
    blocks = {}
    for r in table.rows:
        m = BLOCK.search(r.key)
        if r.kind == "module" and m:
            blocks[m.group(1)] = (r.forward_device_ns or 0) + (r.backward_device_ns or 0)
    total = sum(blocks.values())
    assert total > 0
    return {k: v / total for k, v in blocks.items()}


def test_compiled_kernels_land_on_model_modules() -> None:
    trace = _compiled()
    att = attribute(trace)
    origins = compiled_origins(att, read_compile_info(sibling_folder(COMPILED)))  # type: ignore[arg-type]
    compiled = origins.call >= 0  # launched inside a compiled graph's range
    dur = att.gpu_dur_ns.astype(np.float64)
    assert compiled.any()
    placed = compiled & (origins.source == COMPILE_INFO) & (origins.module >= 0)
    share = dur[placed].sum() / dur[compiled].sum()
    assert share >= 0.95, f"{share:.1%} of the compiled graphs' device time on a model module"


def test_each_block_like_eager() -> None:
    compiled = _block_share(breakdown(_compiled(), "module"))
    eager = _block_share(breakdown(load_trace(EAGER), "module"))
    assert compiled.keys() == eager.keys()
    for block, e in eager.items():
        assert abs(compiled[block] - e) <= 0.10 * e, (block, compiled[block], e)
