"""Damaged real traces either import or raise TraceFormatError: never anything else."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuviz.trace import jsonscan
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parents[1] / "data"
TEXTS = {
    name: gzip.decompress((DATA / name).read_bytes())
    for name in ("worker_thread.json.gz", "streams_overlap.json.gz")
}
# GPUVIZ_FUZZ_EXAMPLES raises the count for a longer hunt by hand.
SETTINGS = settings(
    max_examples=int(os.environ.get("GPUVIZ_FUZZ_EXAMPLES", "35")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
_TMP = Path(tempfile.mkdtemp(prefix="gpuviz-fuzz-"))


def import_bytes(data: bytes, suffix: str = ".json") -> None:
    path = _TMP / f"fuzz{suffix}"
    path.write_bytes(data)
    try:
        trace = load_trace(path)
    except TraceFormatError as e:
        assert str(path) in str(e)
        return
    # What imported is consistent.
    assert len(trace.slices.start_ns) == len(trace.slices.depth)
    assert trace.event_count >= len(trace.slices)


@SETTINGS
@given(name=st.sampled_from(sorted(TEXTS)), cut=st.floats(0.0, 1.0), gz=st.booleans())
def test_truncated(name: str, cut: float, gz: bool) -> None:
    text = TEXTS[name]
    data = gzip.compress(text) if gz else text
    import_bytes(data[: int(len(data) * cut)], ".json.gz" if gz else ".json")


@SETTINGS
@given(
    name=st.sampled_from(sorted(TEXTS)),
    flips=st.lists(
        st.tuples(st.floats(0.0, 1.0, exclude_max=True), st.integers(0, 255)),
        min_size=1,
        max_size=4,
    ),
    small_blocks=st.booleans(),
)
def test_byte_flips(name: str, flips: list[tuple[float, int]], small_blocks: bool) -> None:
    data = bytearray(TEXTS[name])
    for where, value in flips:
        data[int(where * len(data))] = value
    old = jsonscan.BLOCK_BYTES
    jsonscan.BLOCK_BYTES = 512 if small_blocks else old
    try:
        import_bytes(bytes(data))
    finally:
        jsonscan.BLOCK_BYTES = old


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_FIELDS = ["ph", "cat", "name", "ts", "dur", "pid", "tid", "id", "bp", "args", "s"]
_ARG_FIELDS = [
    "device",
    "stream",
    "correlation",
    "External id",
    "bytes",
    "inDevice",
    "Total Allocated",
    "Bytes",
    "Device Id",
    "Device Type",
    "name",
]


@SETTINGS
@given(
    name=st.sampled_from(sorted(TEXTS)),
    swaps=st.lists(
        st.tuples(
            st.floats(0.0, 1.0, exclude_max=True),
            st.sampled_from(_FIELDS),
            st.sampled_from(_ARG_FIELDS),
            st.booleans(),
            _VALUES,
        ),
        min_size=1,
        max_size=5,
    ),
    as_list=st.booleans(),
)
def test_type_swaps(
    name: str, swaps: list[tuple[float, str, str, bool, Any]], as_list: bool
) -> None:
    value = json.loads(TEXTS[name])
    events = value["traceEvents"]
    for where, key, arg_key, in_args, new in swaps:
        e = events[int(where * len(events))]
        if in_args and isinstance(e.get("args"), dict):
            e["args"][arg_key] = new
        else:
            e[key] = new
    doc: Any = events if as_list else value
    import_bytes(json.dumps(doc).encode())
