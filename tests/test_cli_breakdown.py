"""``gpuviz breakdown``: every --by on every real trace, JSON shape, --top, bad input, names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuviz.analysis.breakdown import NoStacksError, breakdown
from gpuviz.analysis.breakdown_table import BY_VALUES
from gpuviz.cli import main
from gpuviz.commands.breakdown import format_breakdown
from gpuviz.trace.kineto import load_trace
from tests.evil_names import unsafe_chars, write_evil_trace

ROOT = Path(__file__).parent.parent
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "assets" / "samples"
BERT = DATA / "tl__h100__gaunernst_bert-small-uncased__1016001.json.gz"
NS = DATA / "hta__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"

COMMON = {
    "key",
    "kind",
    "calls",
    "cpu_self_us",
    "cpu_total_us",
    "device_self_us",
    "device_total_us",
}
EXTRA = {
    "op": {"flops"},
    "op-shape": {"flops", "input_shapes", "input_types"},
    "module": {"forward_device_us", "backward_device_us"},
    "line": {"forward_device_us", "backward_device_us"},
    "kernel": set(),
    "step": {"duration_us", "rank", "step"},
}


def _traces() -> list[Path]:
    out = []
    for folder in (DATA, SAMPLES):
        for p in sorted(folder.iterdir()):
            if p.name.endswith((".json", ".json.gz")) and "memory_timeline" not in p.name:
                out.append(p)
            elif p.name in ("attribution", "roofline", "roofline_cpu", "truth", "truth_cpu"):
                out += sorted(p.glob("*.json.gz"))
            elif p.is_dir() and any(p.glob("*.json*")) and p.name not in ("events",):
                out.append(p)  # a folder of ranks
    return out


@pytest.mark.parametrize("path", _traces(), ids=lambda p: p.name[:40])
def test_every_table_of_every_trace(path: Path) -> None:
    trace = load_trace(path)
    total_device = None
    for by in BY_VALUES:
        try:
            table = breakdown(trace, by)
        except NoStacksError:
            assert by in ("module", "line")
            continue
        text = format_breakdown(table, table.rows, trace.sources, len(table.rows))
        assert unsafe_chars(text) == []
        for r in table.rows:
            j = r.to_json(by)
            assert COMMON | EXTRA[by] <= set(j), (by, sorted(j))
            assert r.calls >= 0 and r.device_self_ns <= r.device_total_ns + 1
            assert r.cpu_self_ns <= r.cpu_total_ns + 1
        # Every kernel is in one row or unattributed: self times add up to all device time.
        selfs = sum(r.device_self_ns for r in table.rows) + table.unattributed_device_ns
        if by != "step":
            if total_device is None:
                total_device = selfs
            assert abs(selfs - total_device) <= max(1, len(table.rows)), by


def test_json_shape_and_top(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(BERT), "--by", "op", "--json", "--top", "0"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["by"] == "op" and j["source"] == str(BERT)
    assert len(j["rows"]) > 20
    totals = [r["device_total_us"] for r in j["rows"]]
    assert totals == sorted(totals, reverse=True)
    addmm = next(r for r in j["rows"] if r["key"] == "aten::addmm")
    assert addmm["calls"] == 26 and addmm["device_self_us"] > 0
    assert main(["breakdown", str(BERT), "--by", "op", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 20
    assert main(["breakdown", str(BERT), "--by", "op", "--json", "--top", "3"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 3


def test_modules_of_a_real_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(BERT), "--by", "module", "--json", "--top", "0"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    root = rows["BertLMHeadModel_0"]
    kernels_us = sum(r["device_self_us"] for r in rows.values())
    assert root["device_total_us"] == pytest.approx(kernels_us, abs=0.01)
    assert rows["BertLMHeadModel_0.BertModel_0"]["device_total_us"] < root["device_total_us"]
    assert any(k.endswith(".Linear_25") for k in rows)


def test_lines_land_on_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(BERT), "--by", "line", "--json", "--top", "1"]) == 0
    top = json.loads(capsys.readouterr().out)["rows"][0]
    assert top["key"].startswith("transformers/models/bert/modeling_bert.py:")


def test_a_trainer_run_lands_on_the_model_not_on_the_trainer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GPT-2 under the HF Trainer on an H100 (gpuviz profile): the framework owns the loop, yet
    # the time lands on the model's modules and on transformers' model lines, forward and
    # backward, never on trainer.train() as one line.
    hf = DATA / "attribution" / "hf_gpt2_trainer.json.gz"
    assert main(["breakdown", str(hf), "--by", "module", "--json", "--top", "0"]) == 0
    modules = {r["key"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    blocks = [k for k in modules if k.endswith(tuple(f".GPT2Block_{i}" for i in range(4)))]
    assert len(blocks) == 4
    for k in blocks:
        assert modules[k]["backward_device_us"] > modules[k]["forward_device_us"] > 0
    assert main(["breakdown", str(hf), "--by", "line", "--json", "--top", "0"]) == 0
    lines = json.loads(capsys.readouterr().out)["rows"]
    device = sum(r["device_self_us"] for r in lines)
    model = sum(r["device_self_us"] for r in lines if r["key"].startswith("transformers/"))
    trainer = sum(r["device_self_us"] for r in lines if r["key"].startswith("transformers/trainer"))
    assert model - trainer > 0.9 * device  # the model's lines: 93% here
    assert trainer < 0.01 * device  # the Trainer's own ops (a grad norm, a loss scale): 0.4%


def test_backward_rows_of_a_training_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(NS), "--by", "op", "--json", "--top", "0"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    bwd = rows["aten::convolution_backward"]
    assert bwd["calls"] == 265 and bwd["device_self_us"] > 0


def test_text_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(BERT), "--by", "op-shape", "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "Ops by name and input shapes, 5 of" in out
    assert "[[1, 141, 512], [512, 512], [512]]" in out


@pytest.mark.parametrize("by", ["module", "line"])
def test_no_stacks_exits_2(by: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(NS), "--by", by]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "gpuviz profile" in err and "--no-stack" in err and "with_stack=True" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--top", "-1"], "--top -1"),
        (["--mine"], "--mine"),
        (["--by", "nope"], "--by"),
    ],
)
def test_bad_usage_exits_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) if "nope" in args else _no_raise():
        code = main(["breakdown", str(BERT), *args])
        assert code == 2
    assert message in capsys.readouterr().err


class _no_raise:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["breakdown", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("by", ["op", "kernel", "step"])
def test_hostile_names_are_escaped(
    by: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_evil_trace(tmp_path)
    assert main(["breakdown", str(path), "--by", by, "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert unsafe_chars(out) == []
    assert len(out.splitlines()) > 4


@pytest.mark.parametrize(
    ("by", "key"),
    [("op", "op"), ("module", "module"), ("line", "source line"), ("step", "step")],
)
def test_the_no_row_line_names_the_row_key_and_one_row_is_singular(by: str, key: str) -> None:
    # issue 47, item 20: under --by module it said "launched outside any step", and a table
    # of one row said "1 rows"
    import numpy as np

    from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
    from gpuviz.commands.breakdown import format_breakdown

    row = BreakdownRow(
        key="k", calls=1, cpu_self_ns=0, cpu_total_ns=0, device_self_ns=10, device_total_ns=10
    )
    kernels = np.arange(2, dtype=np.int64)
    table = Breakdown(by, [row], kernels, np.array([0, -1]), unattributed_device_ns=1_500_000)
    text = format_breakdown(table, table.rows, "t.json", 1)
    assert ", 1 row, times in ms" in text and "1 rows" not in text
    (line,) = [x for x in text.splitlines() if x.startswith("Device time in no row")]
    assert line == (
        "Device time in no row: 1.500 ms (kernels whose launch is not in the trace, or launched "
        f"outside any {key})"
    )
    table.rows.append(row)
    assert ", 2 rows, times in ms" in format_breakdown(table, table.rows, "t.json", 2)
