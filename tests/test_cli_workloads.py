"""``gpuviz workloads [--json]``: the list, its parameters, and no torch imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from subproc import gpuviz_env

ROOT = Path(__file__).resolve().parents[1]


def run(code: str) -> str:
    env = gpuviz_env()
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout


def test_workloads_json_lists_declarations_without_torch() -> None:
    out = run(
        "import sys, io, contextlib, json\n"
        "from gpuviz.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    code = main(['workloads', '--json'])\n"
        "print(json.dumps({'code': code, 'torch': 'torch' in sys.modules, 'out': json.loads(buf.getvalue())}))\n"
    )
    res = json.loads(out)
    assert res["code"] == 0 and not res["torch"]
    by = {w["name"]: w for w in res["out"]["workloads"]}
    assert {"loops", "streams", "placement", "training"} <= set(by)
    loops = {p["name"]: p for p in by["loops"]["params"]}
    assert loops["data"]["type"] == "ints" and loops["data"]["default"] == [1, 2, 3, 4, 5]
    assert loops["n"]["type"] == "int" and loops["n"]["min"] == 0
    assert by["loops"]["multi_gpu"] is False and by["loops"]["multi_process"] is False


def test_workloads_text() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "gpuviz", "workloads"],
        capture_output=True,
        text=True,
        env=gpuviz_env(),
    )
    assert r.returncode == 0
    assert "loops:" in r.stdout and "-p n=0" in r.stdout and "FILE.py:FUNC" in r.stdout
