"""The agents' breakdown of a graph-replay run reads the capture beside it, as the CLI does."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuviz.agents.store import Store

PAIR = Path(__file__).parents[1] / "data" / "graphs" / "vllm_decode_full"


def test_breakdown_uses_the_capture_beside_the_run(tmp_path: Path) -> None:
    store = Store()
    merged = store.breakdown(PAIR / "graph_execution.json.gz", "module")
    keys = {r.key for r in merged.rows}
    assert "GptOssForCausalLM_0.GraphModule_0" in keys
    alone = tmp_path / "run.json.gz"
    shutil.copy(PAIR / "graph_execution.json.gz", alone)
    unit = store.breakdown(alone, "op")
    assert [r.key for r in unit.rows if r.kind == "graph"] == ["graph 1: 421 kernels"]
    assert unit.unattributed_device_ns == merged.unattributed_device_ns == 0
