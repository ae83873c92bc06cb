"""Outputs do not depend on string hashing (PYTHONHASHSEED): ``--cluster``'s byte-for-byte
promise (issue 51) needs every output to be the same from one process to the next. The MFU
headline's precisions were a set sorted by FLOPs only: tied precisions came in hash order,
and ``check``'s JSON of roofline.json.gz differed between seeds 1 and 3."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = "tests/data/roofline/roofline.json.gz"


def _check_json(seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed, GPUVIZ_NO_CACHE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", "check", TRACE, "--against", TRACE, "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_check_json_is_the_same_under_two_hash_seeds() -> None:
    assert _check_json("1") == _check_json("3")
