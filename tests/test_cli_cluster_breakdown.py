"""``breakdown DIR --cluster`` from the ranks' rows (issue 51), against a LocalCluster of two
worker processes: the JSON and text are the local path's byte for byte, made without the
client assembling the whole trace (the whole-trace route on the cluster fails the test if it
is taken), the module table too (its FLOPs, MFU, peaks line and FLOP warnings) on two ranks
with modules; tables whose rows are not sums still go that route, as before, and so do module
tables of graph replays; a bad rank file is named, skipped and the answer marked incomplete,
with the other ranks' rows."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is missing")

import test_cli_cluster as base
from module_ranks import big_mm_flops, module_calls, write_module_job

from gpuviz.trace import cluster, cluster_decode

# That module's fixtures (a LocalCluster of two worker processes, each test's environment).
scheduler = base.scheduler
_env = base._env
_run = base._run
whole_trace = base.whole_trace

DATA = Path(__file__).parent / "data"
FOLDERS = ["ddp_2rank", "gloo_4rank_cpu", "nccl_2rank_h200", "ddp_nccl_4rank", "gloo_2rank_h100"]


@pytest.fixture
def no_whole_trace(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Fails the command if the client assembles the folder from the workers' decoding."""
    used: list[int] = []

    def whole(*args: object, **kw: object) -> None:
        used.append(1)
        raise AssertionError("the whole trace was assembled on the client")

    monkeypatch.setattr(cluster_decode, "read_on_cluster", whole)
    return used


@pytest.mark.parametrize("folder", FOLDERS)
def test_op_kernel_and_step_tables_are_the_local_paths(
    capsys: pytest.CaptureFixture[str], scheduler: str, folder: str, no_whole_trace: list[int]
) -> None:
    path = str(DATA / folder)
    for command in (
        ["--by", "op", "--json"],
        ["--by", "kernel", "--json"],
        ["--by", "step", "--json"],
        ["--by", "op", "--top", "5"],  # the text, cut
        ["--by", "step"],
    ):
        here = _run(capsys, "breakdown", path, *command, "--no-cache")
        there = _run(capsys, "breakdown", path, *command, "--no-cache", "--cluster", scheduler)
        assert here[0] == there[0] == 0, (command, here[2], there[2])
        assert there[1] == here[1], command  # byte for byte
        ranks = len(list((DATA / folder).iterdir()))
        assert f"{ranks}/{ranks} ranks done" in there[2]  # the workers made the tables
    assert not no_whole_trace


def _said(err: str) -> list[str]:
    """The stderr lines that are not the progress bar's."""
    return [x for x in err.replace("\r", "\n").splitlines() if x and "ranks done" not in x]


@pytest.mark.parametrize(
    "folder",
    [
        "ddp_nccl_4rank",
        "whatif/gpu/gloo_even",
        "whatif/gpu/gloo_slow",
        "gloo_4rank_cpu",
        "ddp_modules_2rank",
    ],
)
def test_op_shape_tables_and_their_roofline_are_the_local_paths(
    capsys: pytest.CaptureFixture[str], scheduler: str, folder: str, no_whole_trace: list[int]
) -> None:
    """GEMMs with shapes on every rank (FLOPs, bytes, roof columns), and a folder of a CPU
    job (no peaks: the same stderr line)."""
    path = str(DATA / folder)
    for command in (["--json"], ["--top", "5"]):
        here = _run(capsys, "breakdown", path, "--by", "op-shape", *command, "--no-cache")
        there = _run(
            capsys, "breakdown", path, "--by", "op-shape", *command, "--no-cache",
            "--cluster", scheduler,
        )  # fmt: skip
        assert here[0] == there[0] == 0, (command, here[2], there[2])
        assert there[1] == here[1], command  # byte for byte
        assert _said(there[2]) == _said(here[2])
        ranks = len(list((DATA / folder).iterdir()))
        assert f"{ranks}/{ranks} ranks done" in there[2]  # the workers made the tables
    rows = json.loads(_run(capsys, "breakdown", path, "--by", "op-shape", "--json")[1])["rows"]
    if "cpu" not in folder:
        assert any(r["flops"] and r["bound"] for r in rows)
    assert not no_whole_trace


@pytest.mark.parametrize("mine", [[], ["--mine"]])
def test_source_lines_of_a_folder_with_stacks_are_the_local_paths(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    monkeypatch: pytest.MonkeyPatch,
    mine: list[str],
    no_whole_trace: list[int],
) -> None:
    path = str(DATA / "whatif" / "gpu" / "gloo_even")
    here = _run(capsys, "breakdown", path, "--by", "line", *mine, "--json", "--no-cache")
    monkeypatch.setenv(cluster.ENV, scheduler)  # the address from the environment
    there = _run(capsys, "breakdown", path, "--by", "line", *mine, "--json", "--no-cache")
    assert here[0] == there[0] == 0 and there[1] == here[1]
    assert json.loads(there[1])["rows"] and "2/2 ranks done" in there[2]
    assert not no_whole_trace


def test_a_folder_without_stacks_is_bad_input_as_on_the_local_path(
    capsys: pytest.CaptureFixture[str], scheduler: str, no_whole_trace: list[int]
) -> None:
    path = str(DATA / "ddp_2rank")
    here = _run(capsys, "breakdown", path, "--by", "line", "--no-cache")
    there = _run(capsys, "breakdown", path, "--by", "line", "--no-cache", "--cluster", scheduler)
    assert here[0] == there[0] == 2
    assert here[2].strip().splitlines()[-1] == there[2].strip().splitlines()[-1]


def test_tables_that_are_not_sums_are_read_whole_as_before(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    whole_trace: list[int],
    tmp_path: Path,
) -> None:
    # One rank without deviceProperties: its shapes count against no peaks, the folder's
    # against the other rank's (breakdown_shapes declines; the folder is read whole).
    path = str(tmp_path / "job")
    shutil.copytree(DATA / "whatif" / "gpu" / "gloo_even", path)
    doc = json.loads(gzip.decompress(Path(path, "rank-1.json.gz").read_bytes()))
    del doc["deviceProperties"]
    Path(path, "rank-1.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    here = _run(capsys, "breakdown", path, "--by", "op-shape", "--json", "--no-cache")
    there = _run(
        capsys,
        "breakdown",
        path,
        "--by",
        "op-shape",
        "--json",
        "--no-cache",
        "--cluster",
        scheduler,
    )
    assert here[0] == there[0] == 0 and there[1] == here[1]
    assert whole_trace == [1]


def test_a_bad_rank_file_is_named_skipped_and_the_answer_marked_incomplete(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, no_whole_trace: list[int]
) -> None:
    folder, three = base.bad_rank_job(tmp_path)
    for by in ("op", "op-shape", "step"):
        rc, out, err = _run(
            capsys,
            "breakdown",
            str(folder),
            "--by",
            by,
            "--json",
            "--no-cache",
            "--cluster",
            scheduler,
        )
        assert rc == 0, err
        assert "rank skipped" in err and "rank-2.json.gz" in err
        got = json.loads(out)
        assert got["incomplete"]["ranks_failed"] == 1 and got["incomplete"]["of"] == 4
        assert "rank-2.json.gz" in got["incomplete"]["failed"][0]
        # The rows are those of a folder holding only the three good files, read here.
        ref = json.loads(_run(capsys, "breakdown", str(three), "--by", by, "--json")[1])
        assert got["rows"] == ref["rows"] and got["rows"]
        assert got["unattributed_device_us"] == ref["unattributed_device_us"]
        assert [Path(s).name for s in got["source"]] == [Path(s).name for s in ref["source"]]
    rc, out, _ = _run(capsys, "breakdown", str(folder), "--no-cache", "--cluster", scheduler)
    assert rc == 0 and "incomplete: 1 of 4 rank files failed" in out
    # Without --cluster the bad file is bad input, as before (exit 2, named).
    rc, _, err = _run(capsys, "breakdown", str(folder), "--json", "--no-cache")
    assert rc == 2 and "rank-2.json.gz" in err


def test_compiled_ranks_place_their_kernels_with_the_runs_compile_info(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, no_whole_trace: list[int]
) -> None:
    """Two ranks of a torch.compile run, its compile-info folder beside the rank folder (and
    given with --compile-info): each worker attaches it, and the rows are the local path's
    (the module table's compiled rows with their FLOPs of two precisions and MFU too)."""
    compiled = DATA / "compile" / "gpu"
    doc = json.loads(gzip.decompress((compiled / "gpt_compile.json.gz").read_bytes()))
    folder = tmp_path / "run"
    folder.mkdir()
    for rank in range(2):
        one = dict(doc, distributedInfo={"rank": rank, "world_size": 2})
        (folder / f"rank-{rank}.json.gz").write_bytes(gzip.compress(json.dumps(one).encode()))
    info = compiled / "gpt_compile.compile"
    shutil.copytree(info, tmp_path / "run.compile")
    for extra in ([], ["--compile-info", str(info)]):
        for by in ("op", "line", "module"):
            command = ["breakdown", str(folder), "--by", by, "--json", "--no-cache", *extra]
            here = _run(capsys, *command)
            there = _run(capsys, *command, "--cluster", scheduler)
            assert here[0] == there[0] == 0 and there[1] == here[1], (by, extra)
            rows = json.loads(there[1])["rows"]
            # Inductor's kernels were placed: on the ops they fuse, on the lines that wrote them.
            placed = "fused_ops" if by == "op" else "compiled_in"
            assert any(placed in r for r in rows), by
    assert not no_whole_trace


def test_files_of_two_jobs_are_refused_as_on_the_local_path(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path
) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    for f in (DATA / "ddp_2rank").iterdir():
        shutil.copy(f, folder / f.name)
    shutil.copy(DATA / "nccl_2rank_h200" / "rank-0.json.gz", folder / "rank-2.json.gz")
    here = _run(capsys, "breakdown", str(folder), "--no-cache")
    there = _run(capsys, "breakdown", str(folder), "--no-cache", "--cluster", scheduler)
    assert here[0] == there[0] == 2 and here[1] == there[1] == ""
    assert "not one job" in here[2]
    assert there[2].strip().splitlines()[-1] == here[2].strip().splitlines()[-1]


def _stderr_figures(err: str) -> list[str]:
    """The lines of stderr the report writes (FLOP warnings, unknown peaks), not progress."""
    return [x for x in err.splitlines() if x.startswith(("gpuviz: warning", "gpuviz: no peak"))]


def test_module_tables_of_ranks_with_modules_are_the_local_paths(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path, no_whole_trace: list[int]
) -> None:
    """Two ranks with stacks and nn.Module frames (tests/module_ranks.py), one FLOP count no op
    does on each: JSON and text byte for byte, the FLOP warning once with both ranks' count."""

    def bad_flops(rank: int, doc: dict[str, object]) -> None:
        events = doc["traceEvents"]
        assert isinstance(events, list)
        next(e for e in events if e.get("name") == "aten::mm")["args"]["flops"] = 1e300

    folder = str(write_module_job(tmp_path / "job", edit=bad_flops))
    for command in (["--json", "--top", "0"], [], ["--top", "5"]):
        here = _run(capsys, "breakdown", folder, "--by", "module", *command, "--no-cache")
        there = _run(
            capsys,
            "breakdown",
            folder,
            "--by",
            "module",
            *command,
            "--no-cache",
            "--cluster",
            scheduler,
        )
        assert here[0] == there[0] == 0, (command, here[2], there[2])
        assert there[1] == here[1], command  # byte for byte
        assert _stderr_figures(there[2]) == _stderr_figures(here[2])
        assert "2/2 ranks done" in there[2]  # the workers made the tables
    assert "2 op call(s) with a recorded 'flops'" in "\n".join(_stderr_figures(there[2]))
    json_out = _run(capsys, "breakdown", folder, "--by", "module", "--json", "--top", "0")[1]
    rows = {r["key"]: r for r in json.loads(json_out)["rows"]}
    assert rows["TinyLM_0"]["calls"] == module_calls(Path(folder), "TinyLM_0")
    assert sum(r["mfu"] is not None for r in rows.values()) > 10
    # A LocalCluster the command starts itself (local:2) prints the same text.
    text = _run(capsys, "breakdown", folder, "--by", "module", "--no-cache", "--cluster", "local:2")
    assert text[0] == 0 and text[1] == _run(capsys, "breakdown", folder, "--by", "module")[1]
    assert not no_whole_trace


def test_module_tables_of_a_real_ddp_run_are_the_local_paths(
    capsys: pytest.CaptureFixture[str], scheduler: str, no_whole_trace: list[int]
) -> None:
    """One DDP run of 2 ranks recorded on an H100 (tests/data/scripts/ddp_modules.py): every
    module row holds both ranks' calls; JSON and text byte for byte."""
    folder = str(DATA / "ddp_modules_2rank")
    for command in (["--json"], []):
        here = _run(capsys, "breakdown", folder, "--by", "module", *command, "--no-cache")
        there = _run(
            capsys, "breakdown", folder, "--by", "module", *command, "--no-cache",
            "--cluster", scheduler,
        )  # fmt: skip
        assert here[0] == there[0] == 0, (command, here[2], there[2])
        assert there[1] == here[1], command
        assert "2/2 ranks done" in there[2]
    json_out = _run(capsys, "breakdown", folder, "--by", "module", "--json", "--no-cache")[1]
    rows = {r["key"]: r for r in json.loads(json_out)["rows"]}
    ddp = rows["DistributedDataParallel_0"]
    assert ddp["calls"] == module_calls(Path(folder), "DistributedDataParallel_0") == 6
    assert not no_whole_trace


def test_module_tables_of_graph_replays_are_read_whole_as_before(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    tmp_path: Path,
    whole_trace: list[int],
) -> None:
    graphs = DATA / "graphs" / "gpu" / "manual_graph.json.gz"
    folder = str(write_module_job(tmp_path / "job", (graphs, graphs)))
    command = ["breakdown", folder, "--by", "module", "--json", "--no-cache"]
    here = _run(capsys, *command)
    there = _run(capsys, *command, "--cluster", scheduler)
    assert here[0] == there[0] == 0 and there[1] == here[1]
    assert whole_trace == [1]  # the ranks' parts declined: the folder was read whole


@pytest.mark.parametrize("by", ["op", "op-shape"])
def test_op_flops_past_2_53_are_merged_from_the_ranks(
    capsys: pytest.CaptureFixture[str],
    scheduler: str,
    tmp_path: Path,
    by: str,
    no_whole_trace: list[int],
) -> None:
    """Every aten::mm of two ranks near 2**52 FLOPs (tests/module_ranks.py): the rows sum past
    2**53, exact ints on each rank and on the client, so the workers' rows are merged (no
    whole-trace read) and the JSON and text are the local path's byte for byte."""
    folder = str(write_module_job(tmp_path / "job", edit=big_mm_flops))
    for command in (["--json", "--top", "0"], ["--top", "5"]):
        here = _run(capsys, "breakdown", folder, "--by", by, *command, "--no-cache")
        there = _run(
            capsys, "breakdown", folder, "--by", by, *command, "--no-cache",
            "--cluster", scheduler,
        )  # fmt: skip
        assert here[0] == there[0] == 0, (command, here[2], there[2])
        assert there[1] == here[1], command  # byte for byte
        assert "2/2 ranks done" in there[2]  # the workers made the tables
    rows = json.loads(_run(capsys, "breakdown", folder, "--by", by, "--json")[1])["rows"]
    assert any(r["key"] == "aten::mm" and r["flops"] > 2**53 for r in rows)
    assert not no_whole_trace
