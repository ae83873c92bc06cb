"""The parts of ``gpuviz profile``: schedule, options, target, step hooks, figures (in-process)."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuviz.engine.script.options import (
    OutPlan,
    ProfileOptions,
    launcher_rank,
    parse_step_fn,
    plan_output,
    profile_argv,
    rank_events_path,
)
from gpuviz.engine.script.report import quantiles, step_figures
from gpuviz.engine.script.schedule import Phase, Schedule
from gpuviz.engine.script.step_timer import TimedStep
from gpuviz.engine.script.target import compile_main, exit_code_of, resolve_target, run_as_main
from gpuviz.errors import BadInputError


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
@pytest.mark.parametrize(
    ("skip", "warmup", "active", "repeat"),
    list(itertools.product([0, 1, 5], [0, 2], [1, 3], [0, 1, 2])),
)
def test_schedule_is_torch_profiler_schedule(skip: int, warmup: int, active: int, repeat: int):
    import torch

    ours = Schedule(skip, warmup, active, repeat)
    theirs = torch.profiler.schedule(
        wait=0, warmup=warmup, active=active, repeat=repeat, skip_first=skip
    )
    for step in range(60):
        assert ours.phase(step).value == theirs(step).name.lower(), step
    if repeat:
        last = ours.last_step
        assert ours.phase(last) is Phase.RECORD_AND_SAVE
        assert all(ours.phase(s) is Phase.NONE for s in range(last + 1, last + 30))
        recorded = [s for w in range(repeat) for s in ours.recorded_steps(w)]
        assert recorded == [s for s in range(last + 1) if theirs(s).name.startswith("RECORD")]


def test_out_plan_paths(tmp_path: Path) -> None:
    one = OutPlan(tmp_path / "t.json.gz")
    assert one.window_path(0) == tmp_path / "t.json.gz"
    assert one.window_path(2) == tmp_path / "t.window-3.json.gz"
    ranks = OutPlan(tmp_path / "run", rank=3)
    assert ranks.window_path(0) == tmp_path / "run" / "rank-3.json.gz"
    assert ranks.window_path(1) == tmp_path / "run" / "window-2" / "rank-3.json.gz"
    assert ranks.trace == tmp_path / "run"
    rank = launcher_rank({"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0"})
    assert rank is not None and (rank.rank, rank.world_size, rank.local_rank) == (2, 4, 0)
    assert launcher_rank({}) is None
    with pytest.raises(BadInputError):
        launcher_rank({"RANK": "4", "WORLD_SIZE": "4"})
    with pytest.raises(BadInputError, match="give --out a folder"):
        plan_output("x.json.gz", "t", rank)
    with pytest.raises(BadInputError, match=r"must end in \.json"):
        plan_output("folder", "t", None)
    default = plan_output(None, "train", None)
    assert default.base.parent == Path("gpuviz-runs") and default.base.name.startswith("train-")
    assert rank_events_path("e.jsonl", rank) == "e.rank-2.jsonl"


def test_profile_argv_round_trips_through_the_cli_split() -> None:
    from gpuviz.cli import build_parser, split_profile_argv
    from gpuviz.commands.profile import options_from_args

    opts = ProfileOptions(
        script="-odd.py",
        args=["--skip", "9", "-m", "x"],
        skip=0,
        warmup=3,
        active=7,
        repeat=2,
        stop=True,
        step_fn="model:GPT.forward",
        duration_s=2.5,
        out="o.json.gz",
        record_shapes=True,
        memory_snapshot=True,
        snapshot_entries=10,
    )
    words = ["profile", *profile_argv(opts)]
    head, target = split_profile_argv(words, 0)
    args = build_parser().parse_args(head)
    args.script, args.module, args.script_args = (
        target["script"],
        target["module"],
        target["script_args"],
    )
    assert options_from_args(args) == opts
    mod = ProfileOptions(module="pkg.train", args=["a"])
    assert profile_argv(mod) == ["-m", "pkg.train", "a"]


@pytest.mark.parametrize(
    ("flags", "stack", "stack_no_step"),
    [([], True, False), (["--no-stack"], False, False), (["--stack"], True, True)],
)
def test_stacks_are_on_in_the_windows_by_default(flags, stack, stack_no_step) -> None:
    from gpuviz.cli import build_parser, split_profile_argv
    from gpuviz.commands.profile import options_from_args

    head, target = split_profile_argv(["profile", *flags, "t.py"], 0)
    args = build_parser().parse_args(head)
    args.script, args.module, args.script_args = (
        target["script"],
        target["module"],
        target["script_args"],
    )
    opts = options_from_args(args)
    assert (opts.stack, opts.stack_no_step) == (stack, stack_no_step)
    assert profile_argv(opts) == [*flags, "t.py"]  # a rank or the app's child gets the same


@pytest.mark.parametrize("text", ["nocolon", "a:", ":f", "a:b c", "a:class.f", "1a:f", "a:f-g"])
def test_bad_step_fn(text: str) -> None:
    with pytest.raises(BadInputError, match="--step-fn"):
        parse_step_fn(text)


def test_step_fn_forms() -> None:
    assert parse_step_fn("__main__:generate") == ("__main__", "generate")
    assert parse_step_fn("pkg.model:GPT.forward") == ("pkg.model", "GPT.forward")
    assert parse_step_fn("m:outer.<locals>.inner") == ("m", "outer.<locals>.inner")


@pytest.mark.parametrize(
    ("code", "status"), [(None, 0), (0, 0), (3, 3), (True, 1), (256, 0), (-1, 255)]
)
def test_exit_codes_as_python(code: object, status: int) -> None:
    assert exit_code_of(SystemExit(code)) == status
    if code is not True:  # python -c "import sys; sys.exit(code)" agrees
        r = subprocess.run([sys.executable, "-c", f"import sys; sys.exit({code!r})"], check=False)
        assert r.returncode == status


def test_exit_with_a_message_is_printed_and_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code_of(SystemExit("bad config")) == 1
    assert capsys.readouterr().err == "bad config\n"


def test_main_step_fn_is_decorated_at_compile_time(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            calls = []

            def gen(x):
                return x + 1

            class Model:
                def forward(self, x):
                    return gen(x)

            if True:
                def later():
                    return 0

            for i in range(4):
                Model().forward(i)
            later()
            sys.argv_seen = list(sys.argv)
            """
        )
    )
    saved_path0 = sys.path[0]
    try:
        for qual, found, returns in (("gen", 1, 4), ("Model.forward", 1, 4), ("later", 1, 1)):
            target = resolve_target(str(script), None, ["--flag"])
            code, n = compile_main(target, qual)
            assert n == found
            seen: list[object] = []

            def mark(f, seen=seen):
                def wrapped(*a, **k):
                    out = f(*a, **k)
                    seen.append(out)
                    return out

                return wrapped

            run_as_main(target, code, {"__gpuviz_step_fn__": mark})
            assert len(seen) == returns
            assert sys.argv_seen == [str(script), "--flag"]  # type: ignore[attr-defined]
        _code, n = compile_main(resolve_target(str(script), None, []), "missing")
        assert n == 0
    finally:
        sys.path[0] = saved_path0
        if hasattr(sys, "argv_seen"):
            del sys.argv_seen  # type: ignore[attr-defined]


def test_only_the_first_optimizer_ends_steps() -> None:
    import torch

    from gpuviz.engine.script.steps import StepSources

    boundaries: list[tuple[str, object]] = []
    said: list[str] = []
    made: list[bool] = []
    sources = StepSources(
        lambda s, d: boundaries.append((s, d)),
        on_optimizer_created=lambda: made.append(True),
        say=said.append,
    )
    sources.install()
    try:
        g = torch.nn.Linear(2, 2)
        d = torch.nn.Linear(2, 2)
        opt_d = torch.optim.Adam(d.parameters())
        opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
        for _ in range(3):  # a GAN-like loop: two optimizers step each iteration
            d(torch.randn(1, 2)).sum().backward()
            opt_d.step()
            g(torch.randn(1, 2)).sum().backward()
            opt_g.step()
        assert made == [True]
        assert boundaries == [("optimizer.step()", torch.device("cpu"))] * 3
        assert any("second optimizer (SGD)" in s for s in said)
        import gpuviz

        gpuviz.step()  # from now on the script's own calls end steps
        opt_d.step()
        assert len(boundaries) == 4 and boundaries[-1][0] == "gpuviz.step()"
    finally:
        sources.uninstall()
    opt_d.step()
    import gpuviz

    gpuviz.step()
    assert len(boundaries) == 4  # uninstalled: nothing reaches the session


def test_step_figures_leave_out_step_zero_and_profiled_steps() -> None:
    steps = [TimedStep(0, 5000.0, None, False)]
    steps += [TimedStep(k, float(k), None, k in (3, 4)) for k in range(1, 12)]
    fig = step_figures(steps)
    plain = [float(k) for k in range(1, 12) if k not in (3, 4)]
    assert fig["steps"] == 12 and fig["unprofiled_steps"] == len(plain) == 9
    assert fig["wall_ms"]["median"] == pytest.approx(np.median(plain))
    assert fig["wall_ms"]["p90"] == pytest.approx(np.percentile(plain, 90))
    assert fig["profiled_wall_ms"]["median"] == pytest.approx(3.5)
    assert fig["gpu_ms"] is None
    assert quantiles([]) is None
    assert quantiles([2.0]) == {"median": 2.0, "p90": 2.0, "min": 2.0, "max": 2.0, "mean": 2.0}
    assert fig["wall_ms"]["mean"] == pytest.approx(np.mean(plain))


def test_a_cpu_running_ahead_is_compared_by_its_pace() -> None:
    # A DDP rank waiting on a slower one: its CPU launches a few steps in a ms each, then
    # waits 40 ms. The median step (1 ms) is not its pace; the profiled steps, which the
    # profiler keeps in step with the GPU, take 12 ms. Mean to mean: about 1x, not 12x.
    from gpuviz.engine.script.report import report_lines

    unprofiled = [TimedStep(0, 5000.0, None, False)]
    unprofiled += [TimedStep(k, 1.0 if k % 4 else 41.0, None, False) for k in range(1, 21)]
    profiled = [TimedStep(k, 12.0, None, True) for k in range(21, 26)]
    fig = step_figures(unprofiled + profiled)
    assert fig["wall_ms"]["median"] == 1.0 and fig["wall_ms"]["mean"] == pytest.approx(11.0)
    window = {"window": "steps", "profiler_steps": 5, "devices": [], "findings": []}
    result = {"workload": "profile:t.py", "rank": None, "step_source": "optimizer.step()",
              "exit_code": 0, "windows": [window], "trace": "t.json", **fig}  # fmt: skip
    text = "\n".join(report_lines(result))
    assert "median 1 ms, p90 41 ms, mean 11 ms (the CPU runs ahead and then waits" in text
    assert "(1.09x the unprofiled pace)" in text
    steady = step_figures([TimedStep(k, 12.0, None, False) for k in range(21)] + profiled)
    steady_text = "\n".join(report_lines(dict(result, **steady)))
    assert "runs ahead" not in steady_text and "(1.00x the unprofiled pace)" in steady_text
    # On the GPU host: the CPU ran ahead through all 22 steps (mean 3.72 ms) while each took
    # 12.5 ms of GPU time; the profiled steps took 13.5 ms. The GPU's time is the pace.
    ahead = [TimedStep(0, 5000.0, None, False)]
    ahead += [TimedStep(k, 1.5 if k % 8 else 20.0, 12.5, False) for k in range(1, 23)]
    ahead += [TimedStep(k, 13.5, 12.6, True) for k in range(23, 28)]
    gpu_text = "\n".join(report_lines(dict(result, **step_figures(ahead))))
    assert "(the CPU runs ahead of the GPU, whose step time is the pace)" in gpu_text
    assert "(1.08x the unprofiled pace)" in gpu_text


def test_importing_gpuviz_is_cheap() -> None:
    code = (
        "import sys, gpuviz; gpuviz.step(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'numpy', 'PySide6'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_window_figures_of_a_real_gpu_trace_and_the_advisors_top_3() -> None:
    import gzip
    import json

    from gpuviz.analysis.advisor import advise
    from gpuviz.engine.script.report import report_lines, window_figures
    from gpuviz.trace.kineto import load_trace

    path = (
        Path(__file__).resolve().parents[1] / "data" / "events" / "training_h100" / "trace.json.gz"
    )
    fig = window_figures(str(path))
    # Independently: the union of kernel/copy/set intervals, cut to the span of the
    # ProfilerStep# ranges, over that span.
    with gzip.open(path, "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    t0 = min(e["ts"] for e in steps)
    t1 = max(e["ts"] + e["dur"] for e in steps)
    gpu = sorted(
        (max(e["ts"], t0), min(e["ts"] + e["dur"], t1))
        for e in events
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
        and e["ts"] < t1
        and e["ts"] + e["dur"] > t0
    )
    busy, end = 0.0, -1.0
    for s, e in gpu:
        if e > end:
            busy += e - max(s, end)
            end = e
    assert fig["window"] == "steps"
    assert fig["devices"][0]["utilization"] == pytest.approx(busy / (t1 - t0), rel=1e-3)
    expected = [f.title for f in advise(load_trace(path)).findings[:3]]
    assert [f["title"] for f in fig["findings"]] == expected
    result = {
        "workload": "profile:t.py",
        "rank": None,
        "steps": 3,
        "step_source": "optimizer.step()",
        "exit_code": 0,
        "windows": [fig],
        "trace": str(path),
    }
    lines = report_lines(result)
    assert [ln for ln in lines if ln.startswith("advisor, ")] == [
        ln for t in expected for ln in lines if ln.startswith("advisor, ") and t in ln
    ]
    assert any(ln.startswith("trace: ") for ln in lines)


def test_the_launcher_advises_over_every_rank(tmp_path: Path) -> None:
    # Rank 0's own trace shows its waits as exposed communication; over both ranks they are
    # rank 1's lateness (tests/data/nccl_2rank_h200: rank 1 sleeps 10 ms a step).
    from gpuviz.engine.script.report import job_advice, report_lines

    data = Path(__file__).resolve().parents[1] / "data"
    lines = job_advice(str(data / "nccl_2rank_h200"))
    assert lines[0].startswith("advisor (all 2 ranks), critical: Rank 1 is a straggler")
    # Per step: the wait summed over the trace's steps, over its steps (ProfilerStep ranges).
    from gpuviz.analysis.advisor import advise
    from gpuviz.analysis.advisor.findings import fmt_ms
    from gpuviz.trace.kineto import load_trace

    with gzip.open(data / "nccl_2rank_h200" / "rank-0.json.gz", "rt") as f:
        names = {e.get("name", "") for e in json.load(f)["traceEvents"]}
    steps = len([n for n in names if n.startswith("ProfilerStep#")])
    straggler = advise(load_trace(str(data / "nccl_2rank_h200"))).findings[0]
    assert f"; could save {fmt_ms(straggler.saving_ns / steps)} a step (" in lines[0]
    assert "measured under the profiler" in lines[0]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "rank-0.json.gz").write_bytes(b"not gzip")
    [line] = job_advice(str(bad))
    assert line.startswith("advisor: cannot read the rank traces back: ") and "rank-0" in line
    finding = {"severity": "critical", "title": "T", "saving_us": 2000.0, "share": 0.4,
               "step_us": 1000.0}  # fmt: skip
    window = {"window": "steps", "profiler_steps": 1, "devices": [], "findings": [finding]}
    result = {"workload": "profile:t.py", "rank": 0, "steps": 3, "exit_code": 0,
              "windows": [window], "trace": "t"}  # fmt: skip
    own = "advisor (rank 0's trace), critical: T; could save 400 µs a step (40% of its 1.0 ms"
    assert any(ln.startswith(own) for ln in report_lines(result))
    assert any(
        ln.startswith("advisor, critical: T; could") for ln in report_lines(dict(result, rank=None))
    )


def test_a_saving_is_per_step_at_the_unprofiled_pace_and_never_more_than_the_step() -> None:
    # On an H100 a launch-bound window of 5 profiled steps of 35 ms "could save ~173 ms",
    # while an unprofiled step took 24.7 ms.
    from gpuviz.engine.script.report import report_lines

    finding = {"severity": "critical", "title": "T", "saving_us": 173_000.0,
               "share": 173 / 175, "step_us": 35_000.0}  # fmt: skip
    window = {"window": "steps", "profiler_steps": 5, "devices": [], "findings": [finding]}
    wall = {"median": 24.7, "p90": 25.0, "min": 24.0, "max": 26.0, "mean": 24.7}
    result = {"workload": "profile:t.py", "rank": None, "steps": 30, "exit_code": 0,
              "unprofiled_steps": 20, "wall_ms": wall, "windows": [window], "trace": "t"}  # fmt: skip
    [line] = [ln for ln in report_lines(result) if ln.startswith("advisor")]
    saving = float(re.search(r"could save ~([\d.]+) ms a step", line).group(1))
    assert saving == pytest.approx(24.7 * 173 / 175, abs=0.05) and saving <= 24.7
    assert "of the 24.7 ms unprofiled step" in line
    over = dict(finding, share=1.6)  # summed over GPUs: a share above the step
    result["windows"] = [dict(window, findings=[over])]
    [line] = [ln for ln in report_lines(result) if ln.startswith("advisor")]
    assert "could save ~24.7 ms a step (100% of the 24.7 ms unprofiled step)" in line


def test_a_scripts_globals_outlive_its_last_line(tmp_path: Path) -> None:
    # As under ``python script.py``: freeing them as the last line returned freed a DDP
    # model while gloo's threads were still busy, and its process group's destructor hung.
    import gc

    script = tmp_path / "keeps.py"
    script.write_text(
        "import sys, weakref\n\nclass Thing:\n    pass\n\n"
        "thing = Thing()\nsys.gpuviz_thing = weakref.ref(thing)\n"
    )
    main_before = sys.modules.get("__main__")
    target = resolve_target(str(script), None, [])
    code, _ = compile_main(target, None)
    try:
        run_as_main(target, code)
        gc.collect()
        assert sys.gpuviz_thing() is not None  # type: ignore[attr-defined]
        assert sys.modules.get("__main__") is main_before  # put back, as runpy does
    finally:
        if hasattr(sys, "gpuviz_thing"):
            del sys.gpuviz_thing  # type: ignore[attr-defined]


def test_a_trace_the_profiler_could_not_write_names_the_real_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kineto logs its failure and returns; the next step then found no file ("No such file")
    # where the cause was a read-only place.
    import errno
    import tempfile

    from gpuviz.engine.script.writing import EventSink, TraceFiles

    class KinetoThatFailed:
        def save(self, path: str) -> None:
            del path

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    files = TraceFiles(EventSink())
    path = tmp_path / "t.json.gz"
    assert not files.write(KinetoThatFailed(), path, 0)
    assert files.errors == [f"writing {path} failed: {os.strerror(errno.EROFS)}"]
    assert files.traces == [] and files.exports == []


def test_no_trace_says_no_profiled_step_only_when_none_was() -> None:
    from gpuviz.engine.script.report import report_lines

    base = {"workload": "profile:t.py", "rank": None, "steps": 12, "exit_code": 0,
            "windows": [], "trace": None}  # fmt: skip
    failed = dict(base, profiled_steps=5, write_errors=["writing /ro/t.json.gz failed: EROFS"])
    assert report_lines(failed)[-1] == "no trace was written: writing /ro/t.json.gz failed: EROFS"
    assert report_lines(dict(base, profiled_steps=5))[-1] == "no trace was written"
    none = report_lines(dict(base, profiled_steps=0, write_errors=[]))
    assert none[-1] == "no trace was written (no profiled step)"
