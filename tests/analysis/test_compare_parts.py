"""``gpuviz check``'s inputs of a rank folder made a rank at a time
(:mod:`gpuviz.analysis.compare_parts`) are the folder's read whole
(:func:`~gpuviz.analysis.run_compare.run_inputs`), to the last digit, or declined; and the
comparison made from them prints the same JSON as ``compare_runs`` of the folders read whole."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from module_ranks import write_module_job

from gpuviz.analysis.advisor import advise
from gpuviz.analysis.compare_parts import MergedInputs, compare_part, merge_compare_parts
from gpuviz.analysis.mfu_brief import mfu_brief, mfu_unknown_reason
from gpuviz.analysis.run_compare import (
    RunInputs,
    compare_inputs,
    compare_runs,
    run_inputs,
)
from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import import_trace, load_trace

DATA = Path(__file__).parent.parent / "data"
FOLDERS = [
    "whatif/gpu/gloo_even",
    "whatif/gpu/gloo_slow",
    "whatif/cpu_gloo/even",
    "whatif/cpu_gloo/slow",
    "ddp_2rank",
    "ddp_nccl_4rank",
    "gloo_2rank_h100",
    "gloo_4rank_cpu",
    "nccl_2rank_h200",
    "gloo_2rank_straggler_h100",
    "changes",
]


def _merged(folder: Path) -> MergedInputs | str:
    return merge_compare_parts(
        [compare_part(import_trace(str(f)).prepare()) for f in trace_files(folder)]
    )


def _whole(folder: Path) -> RunInputs:
    return run_inputs(advise(load_trace(folder, cache=False)))


def _figures(x: RunInputs | MergedInputs) -> dict[str, Any]:
    hw = x.hardware
    brief = mfu_brief(hw)
    return {
        "peak": x.peak_bytes,
        "totals": {k: dict(sorted(v.items())) for k, v in x.totals.items()},
        "counts": x.counts,
        "mfu": None if brief is None else brief.to_json(),
        "mfu_reason": mfu_unknown_reason(hw, x.calls_recorded) if brief is None else "",
        "peaks": hw.peaks.peaks,
        "flop_warnings": hw.warnings,
        "steps": [(s.rank, s.flops, s.mfu) for s in hw.steps],
    }


def _kernel_events(folder: Path) -> dict[str, int]:
    """Kernel name -> count over the folder's files, read from the JSON (a hand count)."""
    out: dict[str, int] = {}
    for f in trace_files(folder):
        for e in json.loads(gzip.decompress(f.read_bytes()))["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") == "kernel":
                out[e["name"]] = out.get(e["name"], 0) + 1
    return out


@pytest.mark.parametrize("name", FOLDERS)
def test_the_merged_inputs_are_the_whole_folders(name: str) -> None:
    folder = DATA / name
    merged = _merged(folder)
    assert not isinstance(merged, str), merged
    whole = _whole(folder)
    got, want = _figures(merged), _figures(whole)
    assert got == want
    # not vacuous: the folders have steps, ops and (on GPUs) kernels counted
    assert got["counts"].steps >= 2 and got["totals"]["op"] and got["counts"].ops
    kernels = {k: c for k, (c, _) in got["totals"]["kernel"].items()}
    assert kernels == _kernel_events(folder)  # every kernel event of every rank, by name


def test_a_comparison_from_merged_inputs_prints_the_whole_comparisons_json() -> None:
    even, slow = DATA / "whatif/gpu/gloo_even", DATA / "whatif/gpu/gloo_slow"
    a, b = advise(load_trace(even, cache=False)), advise(load_trace(slow, cache=False))
    want = compare_runs(a, b).to_json()
    ma, mb = _merged(even), _merged(slow)
    assert not isinstance(ma, str) and not isinstance(mb, str)
    got = compare_inputs(
        RunInputs(a, ma.peak_bytes, ma.totals, ma.hardware, ma.calls_recorded, ma.counts),
        RunInputs(b, mb.peak_bytes, mb.totals, mb.hardware, mb.calls_recorded, mb.counts),
    ).to_json()
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert got["diff"] and got["changes"]["kernels_per_step"]["baseline"] > 0


def test_modules_of_ranks_with_stacks_sum_to_the_folders(tmp_path: Path) -> None:
    folder = write_module_job(tmp_path / "job")
    merged = _merged(folder)
    assert not isinstance(merged, str), merged
    assert merged.totals["module"] and merged.totals["op_device"]
    assert _figures(merged) == _figures(_whole(folder))


def test_ranks_of_which_only_some_have_stacks_are_declined(tmp_path: Path) -> None:
    folder = write_module_job(
        tmp_path / "job",
        edit=lambda rank, doc: doc.update(
            traceEvents=[
                e for e in doc["traceEvents"] if rank == 0 or e.get("cat") != "python_function"
            ]
        ),
    )
    got = _merged(folder)
    assert isinstance(got, str) and "Python stacks" in got


def test_a_broken_sum_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: counting one rank's kernels twice changes the figures."""
    from gpuviz.analysis import compare_parts as mod

    folder = DATA / "whatif/gpu/gloo_even"
    real = mod._sum
    monkeypatch.setattr(mod, "_sum", lambda dicts: real(list(dicts) + list(dicts)[:1]))
    merged = _merged(folder)
    assert not isinstance(merged, str)
    assert _figures(merged) != _figures(_whole(folder))
