"""Shared fixtures: paths to the real traces copied into tests/data."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# The tests never write to the user's cache: the import cache (and anything else that follows
# XDG_CACHE_HOME) lives in a folder of this session, set before any test or subprocess runs.
_SESSION_CACHE = tempfile.mkdtemp(prefix="gpuviz-test-cache-")
os.environ["GPUVIZ_CACHE_DIR"] = os.path.join(_SESSION_CACHE, "gpuviz")
os.environ["XDG_CACHE_HOME"] = _SESSION_CACHE
os.environ.pop("GPUVIZ_NO_CACHE", None)
os.environ.pop("GPUVIZ_CACHE_MAX_BYTES", None)

DATA = Path(__file__).parent / "data"


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: copies of ../shared/traces (tests never read ../shared)."""
    return DATA


@pytest.fixture
def evil_trace(tmp_path: Path) -> Path:
    """A small Kineto trace whose names (and file name) hold escapes and markup (issue 16)."""
    from evil_names import write_evil_trace

    return write_evil_trace(tmp_path)


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A gpu test on a machine without CUDA is reported as skipped (never as passed).
    if any(item.get_closest_marker("gpu") for item in items) and not _cuda():
        skip = pytest.mark.skip(reason="needs a CUDA GPU: run with -m gpu on the device machine")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


RANK_SNAPSHOTS = (
    ("snap_train.pickle.gz", "rank-0.memory.pickle.gz"),
    ("snap_oom.pickle", "rank-1.memory.pickle"),
    ("snap_wrapped.pickle.gz", "rank-2.memory.pickle.gz"),
)


@pytest.fixture
def rank_snapshots(tmp_path: Path) -> Path:
    """A folder of three recorded allocator snapshots as ranks 0-2 (copied here, not committed)."""
    folder = tmp_path / "ranks"
    folder.mkdir()
    for src, dst in RANK_SNAPSHOTS:
        shutil.copyfile(DATA / "snapshots" / src, folder / dst)
    return folder
