"""``summarize`` on the real traces in tests/data, against an independent plain-json reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from figures_reference import Reference

from gpuviz.analysis.summary import summarize
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
TRACE_SUFFIXES = (".json", ".json.gz")
EXPECTED_SUFFIXES = ("_expected.json", ".key_averages.json", "truth.json")  # record_truth.py


def _is_trace(p: Path) -> bool:
    # A trace file, or a folder of per-rank trace files (tests/data/events holds event streams;
    # attribution/ and roofline*/ hold traces beside the expected figures, a JSON of their own).
    if p.is_dir():
        files = [q for q in p.iterdir() if q.is_file() and q.name.endswith(TRACE_SUFFIXES)]
        return bool(files) and not any(q.name.endswith(EXPECTED_SUFFIXES) for q in files)
    return p.name.endswith(TRACE_SUFFIXES)


TRACES = sorted(p.name for p in DATA.iterdir() if _is_trace(p))
US = pytest.approx  # times: exact in ns; allow float rounding of the µs conversions only


def _approx(v: float) -> object:
    return pytest.approx(v, rel=1e-12, abs=1e-6)


@pytest.fixture(scope="module", params=TRACES)
def pair(request: pytest.FixtureRequest) -> tuple[dict, Reference]:
    path = DATA / request.param
    return summarize(load_trace(path)).to_json(), Reference(path)


def test_counts_span_and_ranks(pair) -> None:
    got, ref = pair
    assert got["events"] == ref.events
    assert got["ranks"] == ref.ranks
    assert got["span_us"] == _approx(ref.span_us())


def test_streams(pair) -> None:
    got, ref = pair
    expected = ref.streams()
    assert [(s["rank"], s["device"], s["stream"]) for s in got["streams"]] == sorted(
        expected, key=lambda k: (-1 if k[0] is None else k[0], k[1], k[2])
    )
    for s in got["streams"]:
        e = expected[(s["rank"], s["device"], s["stream"])]
        assert (s["kernels"], s["memcpy"], s["memcpy_bytes"], s["memset"]) == (
            e["kernels"],
            e["memcpy"],
            e["memcpy_bytes"],
            e["memset"],
        )
        assert s["kernel_us"] == _approx(e["kernel_us"])
        assert s["busy_us"] == _approx(e["busy_us"])


def test_devices(pair) -> None:
    got, ref = pair
    expected = ref.devices()
    assert {(d["rank"], d["device"]) for d in got["devices"]} == set(expected)
    span = ref.span_us()
    for d in got["devices"]:
        assert d["busy_us"] == _approx(expected[(d["rank"], d["device"])])
        assert d["utilization"] == _approx(expected[(d["rank"], d["device"])] / span)
        assert 0 <= d["utilization"] <= 1


def test_top_kernels(pair) -> None:
    got, ref = pair
    expected = ref.top_kernels()
    assert [(k["name"], k["count"]) for k in got["top_kernels"]] == [(n, c) for n, c, _ in expected]
    for k, (_, c, total) in zip(got["top_kernels"], expected):
        assert k["total_us"] == _approx(total)
        assert k["mean_us"] == _approx(total / c)


def test_memory_peaks(pair) -> None:
    got, ref = pair
    expected = ref.memory_peaks()
    assert {
        (m["rank"], m["device"]): (
            m["peak_allocated_bytes"],
            m["peak_reserved_bytes"],
            m["from_deltas"],
        )
        for m in got["memory"]
    } == expected


def test_overlap(pair) -> None:
    got, ref = pair
    cc, ms = ref.overlap_us()
    assert got["overlap"]["compute_copy_us"] == _approx(cc)
    assert got["overlap"]["multi_stream_us"] == _approx(ms)


def test_the_2021_trace_uses_deltas() -> None:
    got = summarize(
        load_trace(DATA / "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz")
    ).to_json()
    assert got["memory"] and all(
        m["from_deltas"] and m["peak_reserved_bytes"] is None for m in got["memory"]
    )
    assert all(m["peak_allocated_bytes"] > 0 for m in got["memory"])
    assert got["streams"] and got["streams"][0]["stream"] == 7  # "stream 7" became 7


def test_streams_overlap_trace_hides_the_copy() -> None:
    got = summarize(load_trace(DATA / "streams_overlap.json.gz")).to_json()
    # The pinned 64 MiB copy on stream 18 runs entirely under the kernels of stream 14.
    copy18 = next(s for s in got["streams"] if s["stream"] == 18)
    assert copy18["memcpy_bytes"] == 64 << 20
    assert got["overlap"]["compute_copy_us"] == _approx(copy18["busy_us"])
    assert got["overlap"]["compute_copy_us"] > 1000
    assert got["memory"][0]["peak_reserved_bytes"] >= got["memory"][0]["peak_allocated_bytes"] > 0


def test_a_trace_with_several_busy_streams_has_multi_stream_overlap() -> None:
    got = summarize(load_trace(DATA / "hta__trace_filter__sampled_rank-0.json.gz")).to_json()
    assert got["overlap"]["multi_stream_us"] > 0


def test_no_gpu_events_is_said_plainly() -> None:
    got = summarize(
        load_trace(DATA / "hta__cupti_profiler__benchmark_result_924719_1679055439_trace.json.gz")
    )
    assert not got.has_gpu_events
    j = got.to_json()
    assert j["streams"] == j["devices"] == j["top_kernels"] == []
    assert j["events"] > 0


@pytest.mark.parametrize(
    "name", ["streams_overlap.json.gz", "ddp_2rank", "hta__trace_filter__sampled_rank-0.json.gz"]
)
def test_range_over_the_whole_trace_matches_the_summary(name: str) -> None:
    from gpuviz.analysis.ranges import range_stats
    from gpuviz.analysis.streams import span_ns

    trace = load_trace(DATA / name)
    s = summarize(trace)
    start = int(trace.slices.start_ns.min())
    r = range_stats(trace, start, start + span_ns(trace))
    assert r.busy_ns == sum(d.busy_ns for d in s.devices)
    assert r.kernels == sum(x.kernels for x in s.streams)
    assert r.kernel_ns == sum(x.kernel_ns for x in s.streams)
    assert (r.compute_copy_ns, r.multi_stream_ns) == (s.compute_copy_ns, s.multi_stream_ns)
    # half the trace holds at most what the whole does
    half = range_stats(trace, start, start + span_ns(trace) // 2)
    assert half.busy_ns <= r.busy_ns and half.kernels <= r.kernels


def test_between_is_called_between_the_figures_and_changes_none() -> None:
    """``gpuviz summary`` under a memory limit gives freed memory back between the figures."""
    trace = load_trace(DATA / "snap_train_profile.json.gz", cache=False)
    calls = []
    with_calls = summarize(trace, between=lambda: calls.append(1))
    assert len(calls) == 5  # after each of streams, devices, kernels, memory and overlap
    assert with_calls.to_json() == summarize(trace).to_json()


@pytest.mark.parametrize("name", ["snap_train_profile.json.gz", "ddp_nccl_4rank"])
def test_figures_computed_side_by_side_on_threads_are_the_same(name: str) -> None:
    """``gpuviz summary`` computes the five figures on a thread pool."""
    from concurrent.futures import ThreadPoolExecutor

    trace = load_trace(DATA / name, cache=False)
    threads = set()

    class Spy(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            def run():  # type: ignore[no-untyped-def]
                import threading

                threads.add(threading.current_thread().name)
                return fn(*args, **kwargs)

            return super().submit(run)

    with Spy(3, thread_name_prefix="spy") as pool:
        side_by_side = summarize(trace, executor=pool)
    assert threads and all(t.startswith("spy") for t in threads)
    assert side_by_side.to_json() == summarize(trace).to_json()
