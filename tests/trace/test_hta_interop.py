"""HolisticTraceAnalysis reads gpuviz's ``--per-rank`` export (runs HTA in a child process).

HTA logs a lot and may start worker processes; running it in a child keeps that out of the
test process, and the child answers with one JSON line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuviz.analysis.streams import stream_stats
from gpuviz.trace.chrome_export import export_per_rank
from gpuviz.trace.kineto import load_trace

pytest.importorskip("hta")

DATA = Path(__file__).parent.parent / "data"

_CHILD = r"""
import json, logging, sys, contextlib, io
logging.disable(logging.CRITICAL)
from hta.common.trace import Trace
from hta.trace_analysis import TraceAnalysis

def kernels(traces, sym):
    kid = sym.sym_index.get("kernel")
    return {int(r): int((df["cat"] == kid).sum()) for r, df in traces.items()}

out = {}
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    for key, folder in json.loads(sys.argv[1]).items():
        raw = Trace(trace_dir=folder)
        raw.parse_traces(use_multiprocessing=False)
        analysis = TraceAnalysis(trace_dir=folder)
        out[key] = {"all": kernels(raw.traces, raw.symbol_table),
                    "analysis": kernels(analysis.t.traces, analysis.t.symbol_table),
                    "ranks": sorted(int(r) for r in analysis.t.get_ranks())}
print(json.dumps(out))
"""


def _hta(folders: dict[str, Path]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps({k: str(v) for k, v in folders.items()})],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _gpuviz_kernels(path: Path) -> dict[int, int]:
    out: dict[int, int] = {}
    for s in stream_stats(load_trace(path)):
        r = 0 if s.rank is None else s.rank
        out[r] = out.get(r, 0) + s.kernels
    return out


@pytest.mark.slow
def test_hta_reads_per_rank_exports(tmp_path: Path) -> None:
    ddp = DATA / "ddp_2rank"
    old = DATA / "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz"
    export_per_rank(load_trace(ddp), tmp_path / "ddp")
    export_per_rank(load_trace(old), tmp_path / "old")
    got = _hta({"ddp": tmp_path / "ddp", "old": tmp_path / "old", "ddp_original": ddp})

    # HTA finds each rank and every kernel gpuviz counts, rank by rank.
    assert got["ddp"]["ranks"] == [0, 1]
    assert {int(k): v for k, v in got["ddp"]["all"].items()} == _gpuviz_kernels(ddp)
    assert got["old"]["ranks"] == [0]
    assert {int(k): v for k, v in got["old"]["all"].items()} == _gpuviz_kernels(old)
    assert sum(got["old"]["all"].values()) > 8000  # the 2021 "Kernel" events, now "kernel"
    # HTA's own analysis (kernels of complete ProfilerSteps) matches what it finds in the original.
    assert got["ddp"]["analysis"] == got["ddp_original"]["analysis"]
    assert all(v > 0 for v in got["ddp"]["analysis"].values())
