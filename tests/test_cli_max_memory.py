"""``--max-memory``: a trace larger than the limit opens without the parts the views can do
without, says which, and its kernel figures are those of the whole import (issue 25)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from gpuviz.cli import main
from gpuviz.trace import memory_budget as mb
from gpuviz.trace.kineto import import_trace, load_trace
from gpuviz.trace.model import Kind

DATA = Path(__file__).parent / "data"
# A with_stack trace of an H100 run: kernels, CPU ops and 2,117 python_function slices.
WITH_STACK = DATA / "tl__h100__Falconsai_nsfw_image_detection__1016002.json.gz"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    monkeypatch.delenv(mb.ENV, raising=False)


def _summary(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[dict, str]:
    assert main(["summary", str(WITH_STACK), "--json", *extra]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_a_tiny_limit_drops_named_parts_and_keeps_the_kernel_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    full, full_err = _summary(capsys)
    reduced, err = _summary(capsys, "--max-memory", "1M")
    assert "left out" not in full_err
    assert "left out" in err and "args text" in err and "python_function slices" in err
    assert "--max-memory" in err  # how to keep them
    assert err.count("\n") == 1
    for key in ("streams", "devices", "top_kernels", "overlap", "span_us", "events"):
        assert reduced[key] == full[key], key
    assert reduced["streams"], "the trace has kernels"


def test_the_text_report_lists_what_was_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(WITH_STACK), "--max-memory", "1M"]) == 0
    out = capsys.readouterr()
    warning = [line for line in out.out.splitlines() if "warning: left out" in line]
    assert len(warning) == 1 and "python_function" in warning[0]
    assert out.err == ""  # said once, in the report


def test_what_is_dropped_and_what_is_kept() -> None:
    full = import_trace(WITH_STACK, max_memory=0)
    args_only = import_trace(WITH_STACK, max_memory=1)
    assert full.dropped == () and not any("left out" in w for w in full.warnings.samples)
    assert args_only.dropped == mb.DROP_ORDER
    assert "left out" in args_only.warnings.samples[0]
    fs, rs = full.slices, args_only.slices
    py = fs.kind == Kind.PYTHON_FUNCTION
    assert py.sum() > 1000 and not (rs.kind == Kind.PYTHON_FUNCTION).any()
    assert len(rs) == len(fs) - int(py.sum())
    # Every other slice is kept, with its ids; GPU-side args are kept, CPU ops' are not.
    for k in (Kind.KERNEL, Kind.MEMCPY, Kind.RUNTIME, Kind.CPU_OP):
        assert (rs.kind == k).sum() == (fs.kind == k).sum(), k
    kern_f, kern_r = fs.kind == Kind.KERNEL, rs.kind == Kind.KERNEL
    assert np_equal(rs.correlation[kern_r], fs.correlation[kern_f])
    assert (rs.args[kern_r] >= 0).all()
    cpu_r, cpu_f = rs.kind == Kind.CPU_OP, fs.kind == Kind.CPU_OP
    assert (fs.args[cpu_f] >= 0).any() and (rs.args[cpu_r] < 0).all()
    assert np_equal(rs.external_id[cpu_r], fs.external_id[cpu_f])
    assert len(args_only.args.text) < len(full.args.text) / 2


def test_launch_flows_are_left_out_and_the_kernels_still_find_their_launches() -> None:
    """Kineto's ac2g flows go; the fwdbwd ones (backward ops' forward ops) stay, and each
    kernel's launch is found by its correlation id as before."""
    path = DATA / "snap_train_profile.json.gz"  # 2,622 ac2g flow events, 1,212 fwdbwd
    full = import_trace(path, max_memory=0)
    reduced = import_trace(path, max_memory=1)
    assert mb.DROP_FLOWS in reduced.dropped
    ac2g, fwdbwd = full.symbols.find("ac2g"), full.symbols.find("fwdbwd")
    assert (full.flows.cat == ac2g).sum() == 2622
    kept = reduced.flows
    assert not (kept.cat == reduced.symbols.find("ac2g")).any()
    assert len(kept) == int((full.flows.cat == fwdbwd).sum()) == 1212
    assert "2,622 launch flow events" in reduced.warnings.samples[0]
    fk = np.flatnonzero(full.slices.kind == Kind.KERNEL)
    rk = np.flatnonzero(reduced.slices.kind == Kind.KERNEL)
    found_f, found_r = full.launches_of(fk), reduced.launches_of(rk)
    assert (found_f >= 0).sum() == 900 and np_equal(found_f >= 0, found_r >= 0)
    on = found_f >= 0
    assert np_equal(full.slices.start_ns[found_f[on]], reduced.slices.start_ns[found_r[on]])


def np_equal(a, b) -> bool:
    return len(a) == len(b) and bool((a == b).all())


@pytest.mark.parametrize("start", ["fork", "spawn"])
@pytest.mark.parametrize("folder", [False, True])
def test_import_children_drop_the_same(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, start: str, folder: bool
) -> None:
    """Chunks, and whole files (a rank folder's), decoded in children leave out what the
    importer's own reads do."""
    path = WITH_STACK
    if folder:
        path = tmp_path / "ranks"
        path.mkdir()
        for r in range(2):
            (path / f"rank-{r}.json.gz").write_bytes(WITH_STACK.read_bytes())
    alone = import_trace(path, max_memory=1)
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKERS", "1")
    monkeypatch.setenv("GPUVIZ_IMPORT_WORKER_MIN_BYTES", "0")
    monkeypatch.setenv("GPUVIZ_IMPORT_START", start)
    parallel = import_trace(path, max_memory=1)
    assert "4,234 python_function" in parallel.warnings.samples[0] or not folder
    assert parallel.dropped == alone.dropped
    assert parallel.warnings.samples[0] == alone.warnings.samples[0]
    assert len(parallel.slices) == len(alone.slices)
    assert len(parallel.args.text) == len(alone.args.text)


def test_the_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(mb.ENV, "1M")
    assert import_trace(WITH_STACK).dropped == mb.DROP_ORDER
    monkeypatch.setenv(mb.ENV, "100G")
    assert import_trace(WITH_STACK).dropped == ()


def test_a_reduced_import_is_not_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPUVIZ_NO_CACHE")
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "t.json.gz"
    src.write_bytes(WITH_STACK.read_bytes())
    monkeypatch.setenv(mb.ENV, "1M")
    assert load_trace(src).dropped == mb.DROP_ORDER
    assert load_trace(src).dropped == mb.DROP_ORDER  # imported again, not from a cache
    monkeypatch.setenv(mb.ENV, "100G")
    whole = load_trace(src)
    assert whole.dropped == () and (whole.slices.kind == Kind.PYTHON_FUNCTION).any()


@pytest.mark.parametrize("bad", ["1x", "0", "-5G", ""])
def test_a_bad_limit_is_exit_2_naming_the_option(
    capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["summary", str(WITH_STACK), "--max-memory", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--max-memory" in err and "Traceback" not in err


def test_a_bad_environment_limit_is_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(mb.ENV, "lots")
    assert main(["summary", str(WITH_STACK)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and mb.ENV in err


@pytest.mark.parametrize(
    ("text", "size"),
    [("512M", 512 * 10**6), ("8G", 8 * 10**9), ("1.5GiB", 3 << 29), ("4096", 4096)],
)
def test_parse_size(text: str, size: int) -> None:
    assert mb.parse_size(text) == size


def test_the_plan_drops_in_order_only_what_it_must(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    head = b'[{"ph": "X", "cat": "python_function"}, {"ph": "X", "cat": "cpu_op"}'
    f.write_bytes(head + b" " * (100 << 20) + b"]")
    assert mb.python_share(str(f)) == 0.5
    size = mb.json_bytes(str(f))
    full = mb.estimate_bytes(size, False)
    no_args = mb.estimate_bytes(size, False, mb.DROP_ORDER[:1])
    assert mb.plan_import([str(f)], False, full).drop == ()
    assert mb.plan_import([str(f)], False, full - 1).drop == mb.DROP_ORDER[:1]
    no_flows = mb.estimate_bytes(size, False, mb.DROP_ORDER[:2])
    assert no_flows < no_args
    assert mb.plan_import([str(f)], False, no_args - 1).drop == mb.DROP_ORDER[:2]
    plan = mb.plan_import([str(f)], False, no_flows - 1)
    assert plan.drop == mb.DROP_ORDER and plan.kept_bytes < no_flows
    assert mb.plan_import([str(f)], False, 0).drop == ()  # no limit
    assert not mb.plan_import([str(f)], False, 1).fits


def test_no_python_functions_none_to_leave_out(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_bytes(b'[{"ph": "X", "cat": "kernel"}' + b" " * (10 << 20) + b"]")
    assert mb.python_share(str(f)) == 0.0
    assert mb.plan_import([str(f)], False, 1).drop == mb.DROP_ORDER[:2]
    assert 0.3 < mb.python_share(str(WITH_STACK)) < 0.7  # 2,117 of its 5,138 events


def test_a_gzip_file_counts_its_inflated_size(tmp_path: Path) -> None:
    f = tmp_path / "t.json.gz"
    f.write_bytes(gzip.compress(b"[" + b" " * 1_000_000 + b"]"))
    assert mb.json_bytes(str(f)) == 1_000_002
    assert mb.json_bytes(str(WITH_STACK)) > 8 * WITH_STACK.stat().st_size  # it's 18x


def test_check_says_what_was_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(WITH_STACK), "--against", str(WITH_STACK), "--max-memory", "1M"])
    assert code == 0
    err = capsys.readouterr().err
    assert err.count("left out") == 2  # both traces


def test_breakdown_says_what_the_limit_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    # The module table needs the stacks that the limit drops: it says so, not "record them".
    assert main(["breakdown", str(WITH_STACK), "--by", "module"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["breakdown", str(WITH_STACK), "--by", "module", "--max-memory", "1M"]) == 2
    err = capsys.readouterr().err
    assert "left out" in err and "raise --max-memory" in err
    assert "gpuviz profile" not in err
