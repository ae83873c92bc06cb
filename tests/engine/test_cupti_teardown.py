"""Profiled runs ask Kineto to detach CUPTI after the trace, unless the user said otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from subproc import gpuviz_env

from gpuviz.engine.profiling import TEARDOWN_ENV, release_cupti_after_tracing


def test_set_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TEARDOWN_ENV, raising=False)
    release_cupti_after_tracing()
    assert os.environ[TEARDOWN_ENV] == "1"


def test_a_users_choice_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TEARDOWN_ENV, "0")
    release_cupti_after_tracing()
    assert os.environ[TEARDOWN_ENV] == "0"


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("0", "0")])
def test_gpuviz_profile_sets_it_for_the_script(
    tmp_path: Path, given: str | None, seen: str
) -> None:
    script = tmp_path / "show.py"
    script.write_text("import os\nprint('TEARDOWN', os.environ.get('TEARDOWN_CUPTI'))\n")
    env = gpuviz_env()
    env.pop(TEARDOWN_ENV, None)
    if given is not None:
        env[TEARDOWN_ENV] = given
    r = subprocess.run(
        [sys.executable, "-m", "gpuviz", "profile", "--duration", "1", "--out",
         str(tmp_path / "t.json.gz"), str(script)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"TEARDOWN {seen}" in r.stdout


def test_a_cpu_only_window_asks_for_the_teardown_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CPU-only torch.profiler window on a CUDA machine left the process's later CUDA steps
    # 20% slower without it (benchmarks/window_aftermath.py); the app runs workloads one after
    # another in one process.
    pytest.importorskip("torch")
    from gpuviz.engine.profiling import ProfilerSession

    monkeypatch.delenv(TEARDOWN_ENV, raising=False)
    session = ProfilerSession(tmp_path / "t.json.gz", 1, cuda=False)
    session.start()
    try:
        assert os.environ.get(TEARDOWN_ENV) == "1"
    finally:
        session.stop()
