"""The agents' server opens a compiled model's trace with the NAME.compile/ folder beside it
(issue 49): its breakdown places the compiled kernels on the model's modules, as the CLI does."""

from __future__ import annotations

import json
from pathlib import Path

from gpuviz.agents.store import Store
from tests.analysis import compiled_case as case


def test_store_breakdown_uses_the_sibling_folder(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    case.write_compile_info(tmp_path / "run.compile")
    rows = {r.key: r for r in Store().breakdown(path, "module").rows}
    block = rows["OptimizedModule_0.Tiny_0.Block_0"]
    assert block.device_total_ns == (case.DUR["gelu0"] + case.DUR["mm0"]) * 1000
    assert block.extra["attribution_source"] == "compile-info"


def test_answer_says_host_time_unknown_not_zero(tmp_path: Path) -> None:
    from gpuviz.agents.breakdown_answer import breakdown_answer

    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    case.write_compile_info(tmp_path / "run.compile")
    store = Store()
    table = store.breakdown(path, "module")
    text, data = breakdown_answer("run.json", table, store.trace(path), None, top=0)
    line = next(x for x in text.splitlines() if x.rstrip().endswith("Block_1.Mlp_1"))
    assert "unknown" in line
    rows = {r["key"]: r for r in data["rows"]}
    assert rows["OptimizedModule_0.Tiny_0.Block_1.Mlp_1"]["cpu_self_us"] is None
