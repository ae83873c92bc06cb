"""Launches that share a correlation id (issue 47, item 18).

Looked up by id alone, every kernel of a shared id went to the first of its launches, silently.
The truth here is the unedited trace: ids are made to collide in a copy, and each kernel must
still go to the launch (and op) it had, with a counted warning; where time cannot tell, the
kernel goes to no launch and the warning says how many.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuviz.cli import main
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Trace

TRACE = Path(__file__).parent.parent / "data" / "attribution" / "tinylm_train.json.gz"
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")


def _doc() -> dict[str, Any]:
    return json.loads(gzip.decompress(TRACE.read_bytes()))


def _write(doc: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _launch_of_each_kernel(trace: Trace) -> list[tuple[int, str] | None]:
    """Each GPU slice's launch as (start, name), in slice order: comparable across imports."""
    s = trace.slices
    gpu = np.flatnonzero(trace.gpu_activity_mask())
    out: list[tuple[int, str] | None] = []
    for r in trace.launches_of(gpu).tolist():
        out.append(None if r < 0 else (int(s.start_ns[r]), trace.symbols[int(s.name[r])]))
    return out


def _by_op(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict[str, Any]]:
    assert main(["breakdown", str(path), "--by", "op", "--json", "--no-cache"]) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_real_traces_share_no_id() -> None:
    assert load_trace(TRACE, cache=False).shared_launches() is None


def test_two_launches_of_one_id_are_told_apart_by_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two launches (of two ops) and their kernels given one id: the 6th kernel's
    doc = _doc()
    ev = doc["traceEvents"]
    kernels = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    a, b = kernels[5]["args"]["correlation"], kernels[9]["args"]["correlation"]
    for e in ev:
        if isinstance(e.get("args"), dict) and e["args"].get("correlation") == b:
            e["args"]["correlation"] = a
    path = _write(doc, tmp_path / "shared.json")
    edited = load_trace(path, cache=False)
    assert _launch_of_each_kernel(edited) == _launch_of_each_kernel(load_trace(TRACE, cache=False))
    found = edited.shared_launches()
    assert found is not None and (found.ids, found.launches, found.unplaced) == (1, 2, 0)
    warning = edited.warnings.samples[0]
    assert warning.startswith(f"2 launches share 1 correlation id (e.g. id {a})")
    assert warning.endswith("2 of their 2 GPU slices matched to their launches by time")
    # the ops' device times are the unedited trace's (the first op was charged both kernels)
    assert _by_op(capsys, path) == _by_op(capsys, _write(_doc(), tmp_path / "t.json"))


def test_a_hand_merged_file_is_attributed_as_its_parts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same run twice in one file, the second a second later, with the same ids (as two
    # processes' traces concatenated): every op has twice the calls and device time
    doc = _doc()
    ev = doc["traceEvents"]
    timed = [e for e in ev if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M"]
    end = max(e["ts"] + e.get("dur", 0) for e in timed)
    shift = end - min(e["ts"] for e in timed) + 1e6
    ev.extend({**e, "ts": e["ts"] + shift} for e in timed)
    path = _write(doc, tmp_path / "merged.json")
    merged = load_trace(path, cache=False)
    found = merged.shared_launches()
    assert found is not None and found.unplaced == 0
    n_launches = sum(e.get("cat") in LAUNCH_CATS and "correlation" in e["args"] for e in timed)
    assert found.launches == 2 * n_launches
    # each kernel's launch is in its own copy: before it, by less than the shift
    s = merged.slices
    gpu = np.flatnonzero(merged.gpu_activity_mask())
    launch = merged.launches_of(gpu)
    once = load_trace(TRACE, cache=False)
    placed_once = int((once.launches_of(np.flatnonzero(once.gpu_activity_mask())) >= 0).sum())
    has = launch >= 0
    assert int(has.sum()) == 2 * placed_once
    lag_ns = s.start_ns[gpu[has]] - s.start_ns[launch[has]]
    assert (lag_ns >= 0).all() and (lag_ns < shift * 1e3 / 2).all()
    single = {r["key"]: r for r in _by_op(capsys, _write(_doc(), tmp_path / "t.json"))}
    twice = {r["key"]: r for r in _by_op(capsys, path)}
    assert set(single) == set(twice)
    for key, r in single.items():
        assert twice[key]["calls"] == 2 * r["calls"], key
        for col in ("device_self_us", "device_total_us"):
            assert twice[key][col] == pytest.approx(2 * r[col], abs=2e-3), (key, col)


def test_where_ids_are_shared_by_many_no_kernel_gets_a_wrong_launch(tmp_path: Path) -> None:
    # every id folded onto 40 (about 9 launches each, syncs among them): what time places is
    # placed right; the rest is counted, and goes to no launch
    doc = _doc()
    for e in doc["traceEvents"]:
        if isinstance(e.get("args"), dict) and "correlation" in e["args"]:
            e["args"]["correlation"] %= 40
    edited = load_trace(_write(doc, tmp_path / "folded.json"), cache=False)
    got = _launch_of_each_kernel(edited)
    truth = _launch_of_each_kernel(load_trace(TRACE, cache=False))
    wrong = [i for i, (g, t) in enumerate(zip(got, truth, strict=True)) if g is not None and g != t]
    assert wrong == []
    found = edited.shared_launches()
    assert found is not None and found.ids == 40
    assert found.unplaced == sum(g is None for g in got) > 0
    assert f"{found.unplaced} that time cannot place belong to no op" in edited.warnings.samples[0]


def test_what_time_cannot_place_belongs_to_no_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two launches share an id, and one kernel has it, starting after both: whose is it?
    doc = _doc()
    ev = doc["traceEvents"]
    kernels = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    a, b = kernels[5]["args"]["correlation"], kernels[9]["args"]["correlation"]
    for e in ev:
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if args.get("correlation") == b:
            args["correlation"] = a  # b's launch and kernel join a's id ...
        elif args.get("correlation") == a and e.get("cat") not in LAUNCH_CATS:
            args["correlation"] = 10**9  # ... a's kernel leaves it: one kernel, two launches
    path = _write(doc, tmp_path / "shared.json")
    edited = load_trace(path, cache=False)
    s = edited.slices
    gpu = np.flatnonzero(edited.gpu_activity_mask())
    on_a = gpu[s.correlation[gpu] == a]
    assert len(on_a) == 1
    assert edited.launches_of(on_a).tolist() == [-1]  # not silently the first launch's
    found = edited.shared_launches()
    assert found is not None and found.unplaced == 1
    assert edited.warnings.samples[0].endswith(
        "0 of their 1 GPU slices matched to their launches by time, 1 that time cannot place "
        "belong to no op"
    )
    # the CLI prints it, as it prints every import warning
    assert main(["summary", str(path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "warning: 2 launches share 1 correlation id" in out


def _rules_by_hand(launches: list[tuple[int, int, int]], gpus: list[tuple[int, int, int]]) -> dict:
    """The module docstring's rules, one id at a time in plain Python: {gpu row: launch row}."""
    out = {}
    for key in {k for k, _, _ in launches}:
        ls = sorted((t, r) for k, t, r in launches if k == key)
        gs = sorted((t, r) for k, t, r in gpus if k == key)
        if len(ls) < 2:
            continue
        if len(gs) == len(ls) and all(g[0] >= x[0] for g, x in zip(gs, ls)):
            out.update({g[1]: x[1] for g, x in zip(gs, ls)})
            continue
        for t, r in gs:
            before = [x for x in ls if x[0] <= t]
            out[r] = before[0][1] if len(before) == 1 else -1
    return out


@pytest.mark.parametrize("seed", range(8))
def test_the_vectorized_match_follows_the_rules(seed: int) -> None:
    from gpuviz.trace.correlation import match_shared

    rng = np.random.default_rng(seed)
    n = 300
    keys = rng.integers(0, 60, size=n)  # about 5 launches an id
    launch_ns = rng.integers(0, 1000, size=n)
    launches = [(int(k), int(t), 10_000 + i) for i, (k, t) in enumerate(zip(keys, launch_ns))]
    gpus = []
    for i, (k, t) in enumerate(zip(keys.tolist(), launch_ns.tolist())):
        if rng.random() < 0.8:  # most launches launch one kernel, some a second, later
            gpus.append((k, t + int(rng.integers(0, 50)), 2 * i))
        if rng.random() < 0.1:
            gpus.append((k, t + int(rng.integers(0, 400)), 2 * i + 1))
    got = match_shared(
        np.array([r for _, _, r in launches]),
        np.array([k for k, _, _ in launches]),
        np.array([t for _, t, _ in launches]),
        np.array([r for _, _, r in gpus]),
        np.array([k for k, _, _ in gpus]),
        np.array([t for _, t, _ in gpus]),
    )
    assert got is not None
    assert dict(zip(got.gpu_rows.tolist(), got.launch_rows.tolist())) == _rules_by_hand(
        launches, gpus
    )
    assert got.gpu_rows.tolist() == sorted(got.gpu_rows.tolist())


def test_ids_shared_by_calls_without_gpu_work_and_a_large_merge() -> None:
    import time

    from gpuviz.trace.correlation import apply_shared, match_shared

    # two syncs with one id: shared, with nothing to match
    none = match_shared(
        *(np.array([1, 2]), np.array([7, 7]), np.array([0, 5])),
        *([np.array([], dtype=np.int64)] * 3),
    )
    assert none is not None and len(none.gpu_rows) == 0
    out = np.array([-1])
    apply_shared(out, np.array([3]), (none.gpu_rows, none.launch_rows))
    assert out.tolist() == [-1]
    # a hand-merged run of 200k launches: every id shared; one pass, not one per id
    n = 200_000
    ids = np.arange(n)
    t0 = time.perf_counter()
    got = match_shared(
        np.arange(2 * n),
        np.concatenate([ids, ids]),
        np.concatenate([ids * 10, ids * 10 + 10 * n]),
        np.arange(2 * n) + 10 * n,
        np.concatenate([ids, ids]),
        np.concatenate([ids * 10 + 3, ids * 10 + 10 * n + 3]),
    )
    assert time.perf_counter() - t0 < 5
    assert got is not None and got.unplaced == 0
    assert (got.launch_rows == got.gpu_rows - 10 * n).all()
