"""The agents' server's answers as data: ``outputSchema``, ``structuredContent``, enums, pages.

The server is built in this process and spoken to with the SDK's own client
(``mcp.Client(server)``, the in-process transport), so that each call goes through the SDK's
argument validation and result checks. Every ``structuredContent`` is validated here against
the ``outputSchema`` the server listed (with ``jsonschema``, not the server's own models), and
its figures are checked against the CLI's ``--json`` output, run as a separate process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from subproc import gpuviz_env

from gpuviz.agents.confine import Roots
from gpuviz.agents.server import build_server
from gpuviz.analysis.advisor import KINDS
from gpuviz.analysis.breakdown_table import BY_VALUES

DATA = Path(__file__).parents[1] / "data"
TINYLM = "attribution/tinylm_train.json.gz"
LAUNCH = "advisor/adv_launch_bound.json.gz"
SNAP = "snapshots/snap_train.pickle.gz"


class Answer:
    """One call's result: error flag, text, structured content (validated on the way)."""

    def __init__(self, error: bool, text: str, data: Any) -> None:
        self.error, self.text, self.data = error, text, data


def ask(
    calls: list[tuple[str, dict[str, Any]]],
    roots: list[Path] | None = None,
    allow_run: bool = False,
) -> tuple[dict[str, Any], list[Answer]]:
    """List the tools and make ``calls``; each successful answer's structured content is
    validated against its tool's listed output schema."""
    server = build_server(Roots(roots or [DATA]), allow_run=allow_run)

    async def talk() -> tuple[dict[str, Any], list[Answer]]:
        async with Client(server) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            out = []
            for name, args in calls:
                res = await c.call_tool(name, args)
                text = "\n".join(x.text for x in res.content if x.type == "text")
                if not res.is_error:
                    schema = tools[name].output_schema
                    assert schema is not None, name
                    jsonschema.validate(res.structured_content, schema)
                out.append(Answer(bool(res.is_error), text, res.structured_content))
            return tools, out

    return anyio.run(talk)


def cli_json(*args: str) -> Any:
    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", *args, "--json"],
        capture_output=True,
        text=True,
        env=gpuviz_env(),
        check=True,
    )
    return json.loads(out.stdout)


def test_schemas_list_enums_and_every_tool_has_an_output_schema() -> None:
    tools, _ = ask([])
    assert "profile" not in tools  # without --allow-run it is not offered
    assert {"overview", "findings", "events", "memory", "compare", "breakdown", "files"} == set(
        tools
    )
    for t in tools.values():
        assert t.output_schema and t.output_schema["type"] == "object", t.name
    by = tools["breakdown"].input_schema["properties"]["by"]
    assert by["enum"] == list(BY_VALUES)
    kind = tools["findings"].input_schema["properties"]["kind"]
    assert next(k for k in kind["anyOf"] if "enum" in k)["enum"] == list(KINDS)
    assert tools["breakdown"].input_schema["properties"]["top"]["minimum"] == 0
    assert "next_cursor" in json.dumps(tools["breakdown"].output_schema)
    with_run, _ = ask([], allow_run=True)
    assert "profile" in with_run and with_run["profile"].output_schema


def test_structured_figures_agree_with_the_cli() -> None:
    advice = cli_json("advise", str(DATA / LAUNCH))
    ops = cli_json("breakdown", str(DATA / TINYLM), "--by", "op", "--top", "0")
    mem = cli_json("memory", str(DATA / SNAP))["devices"][0]
    _, (over, found, bd, memory) = ask(
        [
            ("overview", {"path": LAUNCH}),
            ("findings", {"path": LAUNCH}),
            ("breakdown", {"path": TINYLM, "top": 5}),
            ("memory", {"path": SNAP}),
        ]
    )
    assert not (over.error or found.error or bd.error or memory.error)
    t = over.data["trace"]
    assert over.data["kind"] == "trace" and over.data["snapshot"] is None
    steps = advice["steps"]
    assert t["steps"] == len(steps)
    assert t["mean_step_us"] == pytest.approx(sum(s["duration_us"] for s in steps) / len(steps))
    assert [f["kind"] for f in t["findings"]] == [f["kind"] for f in advice["findings"]]
    assert t["mfu"] is None and t["mfu_unknown"].startswith("no FLOPs counted")
    assert f"mean step {t['mean_step_us'] / 1000:.3f} ms" in over.text  # the text says the same
    assert [f["saving_us"] for f in found.data["findings"]] == [
        f["saving_us"] for f in advice["findings"]
    ]
    assert found.data["findings"][0]["evidence"] == advice["findings"][0]["evidence"]
    assert [r["key"] for r in bd.data["rows"]] == [r["key"] for r in ops["rows"][:5]]
    assert [r["device_total_us"] for r in bd.data["rows"]] == [
        r["device_total_us"] for r in ops["rows"][:5]
    ]
    assert bd.data["page"] == {
        "first": 0,
        "count": 5,
        "selected": 5,
        "total": 102,
        "next_cursor": None,
    }
    dev = memory.data["snapshot"]["devices"][0]
    assert dev["peak_allocated_bytes"] == mem["peak_allocated_bytes"]
    assert dev["top_sites_at_peak"] == mem["top_sites_at_peak"]


def _body(text: str) -> list[str]:
    """The table rows of a breakdown answer (after its header row)."""
    rows = [x for x in text.splitlines() if x.startswith("  ")]
    return rows[1:]


def test_top_zero_pages_through_every_row_once() -> None:
    # tinylm by op has 102 rows: more than one answer holds. top=0 asks for all: they come
    # in pages of whole rows, each answer's text rows the same as its data rows, and following
    # next_cursor gives every row once, in the CLI's order.
    cli = cli_json("breakdown", str(DATA / TINYLM), "--by", "op", "--top", "0")["rows"]
    keys: list[str] = []
    cursor: int | None = 0
    pages = 0
    while cursor is not None:
        _, [a] = ask([("breakdown", {"path": TINYLM, "top": 0, "cursor": cursor})])
        assert not a.error, a.text
        page = a.data["page"]
        assert page["first"] == cursor and page["selected"] == page["total"] == len(cli)
        body = _body(a.text)
        assert len(body) == page["count"] == len(a.data["rows"]) > 0
        for line, row in zip(body, a.data["rows"]):
            assert line.split()[0] == f"{row['device_total_us'] / 1000:.3f}"
            assert line.rstrip().endswith(row["key"][:40]) or row["key"][:40] in line
        assert len(a.text) <= 4000
        assert "characters left out" not in a.text  # never cut mid-row
        assert "raise top" not in a.text  # top=0 already asks for all
        if page["next_cursor"] is not None:
            assert f"call again with cursor={page['next_cursor']}" in a.text
        keys += [r["key"] for r in a.data["rows"]]
        cursor = page["next_cursor"]
        pages += 1
    assert pages > 1
    assert keys == [r["key"] for r in cli]


def test_events_page_with_a_cursor_and_a_range_past_the_trace() -> None:
    _, answers = ask(
        [
            ("events", {"path": LAUNCH, "start_us": 0, "end_us": 1e9, "name": "sgemm"}),
            ("events", {"path": LAUNCH, "start_us": -1e308, "end_us": 1e308, "name": "sgemm"}),
        ]
    )
    first, wide = answers
    assert not first.error and not wide.error, wide.text
    total = first.data["page"]["selected"]
    assert wide.data["page"]["selected"] == total > 20
    assert not re.search(r"\d{20}", wide.text)  # no 309-digit times
    seen: list[tuple[float, str]] = []
    cursor: int | None = 0
    while cursor is not None:
        args = {"path": LAUNCH, "start_us": 0, "end_us": 1e9, "name": "sgemm", "limit": 7}
        _, [a] = ask([("events", {**args, "cursor": cursor})])
        assert not a.error and 0 < a.data["page"]["count"] <= 7
        seen += [(s["start_us"], s["name"]) for s in a.data["slices"]]
        cursor = a.data["page"]["next_cursor"]
    assert len(seen) == total and seen == sorted(seen, key=lambda x: x[0])


def test_argument_errors_are_one_sentence() -> None:
    calls = [
        ("breakdown", {"path": TINYLM, "top": -1}),
        ("breakdown", {"path": TINYLM, "by": "flavour"}),
        ("breakdown", {"path": TINYLM, "cursor": 10_000}),
        ("events", {"path": LAUNCH, "start_us": 0}),
        ("events", {"path": LAUNCH, "start_us": 0, "end_us": 5, "limit": 0}),
        ("findings", {"path": LAUNCH, "kind": "slow"}),
        ("memory", {"path": SNAP, "at_us": "soon"}),
        ("profile", {"script": "x.py"}),
    ]
    _, answers = ask(calls)
    for (tool, _args), a in zip(calls, answers):
        assert a.error, (tool, a.text)
        assert "\n" not in a.text and len(a.text) < 400, a.text
        assert "pydantic" not in a.text and "validation error" not in a.text, a.text
        assert a.text.rstrip().endswith("."), a.text
    texts = [a.text for a in answers]
    assert texts[0] == "breakdown: top -1: input should be greater than or equal to 0."
    assert "by 'flavour': input should be 'op', 'op-shape'" in texts[1]
    assert "cursor 10000: past the last row" in texts[2]
    assert texts[3] == "events: end_us is missing."
    assert "limit 0: input should be greater than or equal to 1" in texts[4]
    assert "kind 'slow': input should be 'launch_bound'" in texts[5]
    assert "at_us 'soon'" in texts[6]
    assert "started without --allow-run" in texts[7]


def test_memory_at_a_time_outside_the_history_is_clamped() -> None:
    mem = cli_json("memory", str(DATA / SNAP))["devices"][0]
    _, (before, after, within, trace_after) = ask(
        [
            ("memory", {"path": SNAP, "at_us": -5}),
            ("memory", {"path": SNAP, "at_us": 1e308}),
            ("memory", {"path": SNAP, "at_us": mem["peak_time_us"] - mem["window_start_us"]}),
            ("memory", {"path": "snap_train_profile.json.gz", "at_us": 1e308}),
        ]
    )
    for a in (before, after, within, trace_after):
        assert not a.error, a.text
        assert "+-" not in a.text and not re.search(r"\d{20}", a.text), a.text
    b = before.data["snapshot"]["devices"][0]["at"]
    assert b["position"] == "before" and b["entry"] == -1 and b["used_us"] == 0
    assert b["allocated_bytes"] == mem["window_start_live_bytes"]  # live when it began
    assert "at_us=-5 is before the recorded history" in before.text
    e = after.data["snapshot"]["devices"][0]["at"]
    span = mem["window_end_us"] - mem["window_start_us"]
    assert e["position"] == "after" and e["used_us"] == span
    # After the last entry, what is live is what the snapshot's segments hold.
    assert e["allocated_bytes"] == mem["allocated_bytes"]
    assert "is after the recorded history (it ends at" in after.text
    w = within.data["snapshot"]["devices"][0]["at"]
    assert w["position"] == "within" and w["allocated_bytes"] == mem["peak_allocated_bytes"]
    g = trace_after.data["trace"]["gpus"][0]
    assert g["at"]["position"] == "after" and g["at"]["allocated_bytes"] is not None
    assert "is after the recorded history" in trace_after.text


def test_files_lists_what_gpuviz_opens_with_size_and_kind(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "ranks").mkdir(parents=True)
    (root / "mixed").mkdir()
    for i in range(2):
        src = DATA / "ddp_2rank" / f"rank-{i}.json.gz"
        (root / "ranks" / src.name).write_bytes(src.read_bytes())
    for name in ("adv_clean.json.gz", "adv_launch_bound.json.gz"):  # unrelated: not one job
        (root / "mixed" / name).write_bytes((DATA / "advisor" / name).read_bytes())
    (root / "snap.pickle.gz").write_bytes((DATA / SNAP).read_bytes())
    (root / "notes.json").write_text('{"lr": 0.1}')  # JSON, not a trace
    (root / "readme.txt").write_text("x")
    outside = tmp_path / "outside.json.gz"
    outside.write_bytes((DATA / LAUNCH).read_bytes())
    (root / "link.json.gz").symlink_to(outside)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "t.json.gz").write_bytes((DATA / LAUNCH).read_bytes())
    _, [a, sub] = ask([("files", {}), ("files", {"under": "ranks"})], roots=[root])
    assert not a.error and not sub.error
    got = {(e["path"], e["kind"]): e for e in a.data["entries"]}
    expected_paths = {
        ("ranks", "rank folder"),
        ("ranks/rank-0.json.gz", "trace"),
        ("ranks/rank-1.json.gz", "trace"),
        ("mixed/adv_clean.json.gz", "trace"),
        ("mixed/adv_launch_bound.json.gz", "trace"),
        ("snap.pickle.gz", "snapshot"),
    }
    assert set(got) == expected_paths
    folder = got[("ranks", "rank folder")]
    sizes = [(root / "ranks" / f"rank-{i}.json.gz").stat().st_size for i in range(2)]
    assert folder["files"] == 2 and folder["size_bytes"] == sum(sizes)
    assert (
        got[("snap.pickle.gz", "snapshot")]["size_bytes"]
        == (root / "snap.pickle.gz").stat().st_size
    )
    assert a.data["page"]["next_cursor"] is None and "all 6 rows" in a.text
    assert {e["path"] for e in sub.data["entries"]} == {
        "ranks",
        "ranks/rank-0.json.gz",
        "ranks/rank-1.json.gz",
    }
    # Every listed path opens with the other tools.
    _, answers = ask([("overview", {"path": p}) for p, _ in sorted(expected_paths)], roots=[root])
    assert not any(x.error for x in answers), [x.text for x in answers if x.error]


def test_files_pages_through_a_long_listing(tmp_path: Path) -> None:
    raw = (DATA / "advisor" / "adv_low_occupancy.json.gz").read_bytes()
    for i in range(150):
        (tmp_path / f"run-{i:03d}-with-a-rather-long-name.json.gz").write_bytes(raw)
    listed: list[str] = []
    cursor: int | None = 0
    while cursor is not None:
        _, [a] = ask([("files", {"cursor": cursor})], roots=[tmp_path])
        assert not a.error and len(a.text) <= 4000
        listed += [e["path"] for e in a.data["entries"]]
        cursor = a.data["page"]["next_cursor"]
    assert listed == sorted(p.name for p in tmp_path.iterdir())


def test_a_slow_snapshot_does_not_hold_up_a_call_on_another_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Through the SDK's client: while one call's snapshot is held mid-load, a call about a
    # trace already read is answered; then the held one completes.
    import threading

    import gpuviz.trace.allocator_snapshot as allocator_snapshot

    real_load = allocator_snapshot.load_snapshot
    started, release = threading.Event(), threading.Event()

    def held_load(path: Any, *args: Any, **kwargs: Any) -> Any:
        started.set()
        assert release.wait(60), "the test never let the load go"
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(allocator_snapshot, "load_snapshot", held_load)
    server = build_server(Roots([DATA]))
    order: list[str] = []

    async def talk() -> None:
        async with Client(server) as c:
            assert not (await c.call_tool("overview", {"path": LAUNCH})).is_error

            async def slow() -> None:
                res = await c.call_tool("memory", {"path": SNAP})
                assert not res.is_error
                order.append("snapshot")

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                with anyio.fail_after(60):
                    await anyio.to_thread.run_sync(started.wait)
                res = await c.call_tool("findings", {"path": LAUNCH})
                assert not res.is_error
                order.append("trace")
                release.set()

    anyio.run(talk)
    assert order == ["trace", "snapshot"]


def test_compare_and_profile_answer_with_their_schemas(tmp_path: Path) -> None:
    clean = cli_json("advise", str(DATA / "advisor/adv_clean.json.gz"))["steps"]
    launch = cli_json("advise", str(DATA / LAUNCH))["steps"]
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "train.py").write_text("print('ran')\n")
    (root / "gpuviz-runs").symlink_to(outside)  # a link out: refused before anything runs
    _, [cmp] = ask([("compare", {"a": "advisor/adv_clean.json.gz", "b": LAUNCH})])
    assert not cmp.error
    step = cmp.data["step"]
    assert step["baseline_mean_us"] == pytest.approx(
        sum(s["duration_us"] for s in clean) / len(clean)
    )
    assert step["new_mean_us"] == pytest.approx(sum(s["duration_us"] for s in launch) / len(launch))
    assert [f["kind"] for f in cmp.data["findings"]["new"]] == ["launch_bound"]
    _, [run] = ask([("profile", {"script": "train.py"})], roots=[root], allow_run=True)
    assert run.error and "\n" not in run.text
    assert "gpuviz-runs in" in run.text and "symbolic link that leads outside" in run.text
    assert list(outside.iterdir()) == []


def test_a_long_file_name_does_not_push_a_page_past_its_limit(tmp_path: Path) -> None:
    # The head names the file (up to 200 characters): the page's rows are counted with it, so
    # the answer is never cut at a character after them.
    long = tmp_path / ("a-rather-long-run-name-" * 9 + ".json.gz")
    long.write_bytes((DATA / TINYLM).read_bytes())
    _, [a] = ask([("breakdown", {"path": long.name, "by": "op-shape", "top": 0})], [tmp_path])
    assert not a.error and len(a.text) <= 4000 and "characters left out" not in a.text
    assert len(_body(a.text)) == a.data["page"]["count"] > 0
