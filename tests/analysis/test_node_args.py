"""Bulk args decoding: dense spans, sparse rows, rows that do not decode, order kept."""

from __future__ import annotations

import numpy as np
import pytest

from gpuviz.analysis import node_args
from gpuviz.analysis.node_args import decode_args
from gpuviz.trace.model import ArgsStore, Kind
from tests.analysis.synthetic_trace import ev, make_trace


def _trace(texts: list[bytes]):  # type: ignore[no-untyped-def]
    t = make_trace([ev(Kind.CPU_OP, 10 * i, 5, name=f"op{i}") for i in range(len(texts))])
    t.args = ArgsStore(b"".join(texts), np.cumsum([0] + [len(x) for x in texts]).astype(np.int64))
    t.slices.args = np.arange(len(texts), dtype=np.int32)
    return t


@pytest.mark.parametrize("dense", [1, 1 << 20])  # every row of a span, or each row cut out
@pytest.mark.parametrize("n", [5, 600])  # read per span, or the whole text at once
def test_decode_in_any_order(dense: int, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_args, "DENSE", dense)
    monkeypatch.setattr(node_args, "SPAN_ROWS", 64)
    texts = [
        b'{"Sequence number": %d, "Input Dims": [[%d, 3]], "flops": %d, "x": {"y": [1]}}'
        % (i, i, 2 * i)
        for i in range(n)
    ]
    t = _trace(texts)
    rows = np.array([n - 1, 0, 3, n // 2], dtype=np.int64)
    got = decode_args(t, rows, ("sequence", "input_dims", "flops"))
    assert got.sequence.tolist() == rows.tolist()
    assert got.input_dims == [b"[[%d, 3]]" % r for r in rows.tolist()]
    assert got.flops.tolist() == [2.0 * r for r in rows.tolist()]
    assert got.input_types == [b""] * 4  # not asked for


def test_rows_that_do_not_decode_are_absent() -> None:
    texts = [b'{"Sequence number": 1}', b"[1, 2]", b'{"Sequence number": "x"}', b"{broken"]
    texts += [b'{"Sequence number": 5}']
    t = _trace(texts)
    got = decode_args(t, np.arange(5), ("sequence",))
    assert got.sequence.tolist() == [1, -1, -1, -1, 5]
