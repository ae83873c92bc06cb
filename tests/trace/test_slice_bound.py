"""The bound on a trace's slices from its text (issue 51): never below the slices the importer
makes (the truth: ``load_trace``'s slice count), tight on the shortest slices JSON allows."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.slice_bound import MIN_SLICE_BYTES, slices_at_most

DATA = Path(__file__).resolve().parents[1] / "data"
FOLDERS = ["ddp_2rank", "gloo_4rank_cpu", "nccl_2rank_h200", "ddp_nccl_4rank"]


def _write(path: Path, events: list[str], as_list: bool = False) -> Path:
    text = "[" + ",".join(events) + "]" if as_list else '{"traceEvents":[' + ",".join(events) + "]}"
    if path.suffix == ".gz":
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("name", FOLDERS)
def test_never_below_the_imported_slices(name: str) -> None:
    files = [str(f) for f in trace_files(DATA / name)]
    slices = len(load_trace(str(DATA / name)).slices)
    assert slices > 0
    assert not slices_at_most(files, slices - 1)
    assert slices_at_most(files, 400_000)  # the advisor's limit: these are small


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
@pytest.mark.parametrize("as_list", [False, True])
def test_tight_on_the_shortest_slices(tmp_path: Path, suffix: str, as_list: bool) -> None:
    shortest = '{"ph":"X","ts":0,"dur":0}'
    assert len(shortest) == MIN_SLICE_BYTES
    path = _write(tmp_path / f"t{suffix}", [shortest] * 1000, as_list)
    assert len(load_trace(str(path)).slices) == 1000
    assert not slices_at_most([path], 999)
    assert slices_at_most([path], 1000)


def test_escaped_keys_and_begin_end_pairs(tmp_path: Path) -> None:
    # "ph" spelled with \u escapes is still the key; B/E pairs make one slice of two events
    events = ['{"\\u0070h":"X","ts":0,"dur":1}'] * 300 + [
        '{"ph":"B","ts":0}',
        '{"ph":"E","ts":1}',
    ] * 200
    path = _write(tmp_path / "t.json", events)
    slices = len(load_trace(str(path)).slices)
    assert slices == 500
    assert not slices_at_most([path], slices - 1)


def test_many_files_summed_and_unreadable_is_not_shown(tmp_path: Path) -> None:
    shortest = '{"ph":"X","ts":0,"dur":0}'
    paths = [_write(tmp_path / f"r{i}.json.gz", [shortest] * 100) for i in range(5)]
    assert not slices_at_most(paths, 499) and slices_at_most(paths, 500)
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip")
    assert not slices_at_most([*paths, bad], 10**9)
    assert not slices_at_most(paths, -1)
