"""A rank folder's files decoded on a Dask cluster's workers, merged here in file order.

With ``--cluster`` (:mod:`gpuviz.trace.cluster`), the importer
(:func:`gpuviz.trace.kineto_parallel.read_files`) hands each file of a folder to a worker
whole, as it hands a whole file to one of its own children: the worker scans and decodes it
(:meth:`~gpuviz.trace.kineto_chunk_decoder.ChunkDecoder.read_file`, a fresh numbering per
file) and returns the reply a child would; the importer merges the replies in file order
(:meth:`~gpuviz.trace.kineto_decode.FileReader.merge_file`) and assembles the trace as
always. So the trace, and every command's output, is the local import's by construction:
ids, warnings and errors are those of a sequential read, and a file a worker could not take
(odd events, not a trace) is read here, where what is wrong is reported, naming it.

This is the path of the commands that need the whole trace (``advise``, ``breakdown``,
``check``, and ``summary`` where the ranks' parts cannot be merged): the workers do the
decoding (about nine tenths of an import's CPU time), the client the merging and the
assembly. The replies are fetched one at a time in file order and let go once merged, so
the client holds one reply beside the trace it builds; the others wait on their workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gpuviz.trace.errors import ImportCancelledError

if TYPE_CHECKING:
    from gpuviz.trace.cluster import Cluster
    from gpuviz.trace.kineto_decode import FileColumns, FileReader


POLL_S = 0.05
"""While the next reply is not in, the import's cancel is polled this often."""


def read_on_cluster(
    cluster: Cluster,
    readers: Sequence[FileReader],
    after_file: Callable[[], None] | None = None,
) -> list[FileColumns]:
    """Every file of ``readers`` decoded by the cluster's workers and merged here, in order.

    Parameters
    ----------
    cluster : Cluster
    readers : sequence of FileReader
        The importer's readers, one per file (they share its symbols and args text).
    after_file : callable, optional
        Called once each file is merged.

    Returns
    -------
    list of FileColumns
        One per file, in the order given.

    Raises
    ------
    TraceFormatError
        A file is not a trace (read here, named, as the local import reports it).
    ImportCancelledError
        The readers' ``cancelled()`` turned true: every task is cancelled at once.
    """
    from distributed import TimeoutError as DaskTimeout

    from gpuviz.trace.kineto_worker import Decoder

    client = cluster.client
    compress = readers[0].writer.compress if readers else False
    drop = tuple(readers[0].columns.drop) if readers else ()
    futures: list[Any] = [
        client.submit(decode_file, i, r.path, compress, drop, pure=False)
        for i, r in enumerate(readers)
    ]
    out: list[FileColumns] = []
    try:
        for i, (reader, fut) in enumerate(zip(readers, futures)):
            while True:
                if reader.cancelled is not None and reader.cancelled():
                    raise ImportCancelledError(reader.path)
                try:
                    reply: dict[str, Any] | None = fut.result(timeout=POLL_S)
                except (DaskTimeout, TimeoutError):
                    continue
                except Exception:  # the worker failed (died past retries): read it here
                    reply = None
                break
            fut.release()
            futures[i] = None  # let go: its worker drops the reply
            if reply is not None and reply.get("ok"):
                out.append(reader.merge_file(reply, Decoder(), i))
            else:  # it could not: read here, where what is wrong is reported
                reader.restart()
                out.append(reader.read())
            if after_file is not None:
                after_file()
    finally:
        left = [f for f in futures if f is not None and not f.done()]
        if left:
            client.cancel(left, force=True)
    return out


def decode_file(file: int, path: str, compress: bool, drop: Sequence[str]) -> dict[str, Any]:
    """On a worker: the whole-file reply of ``path`` (file ``file`` of the trace), as an
    import child's (see the module docstring), numbered afresh."""
    from gpuviz.trace.gcpause import gc_paused, release_freed_memory
    from gpuviz.trace.kineto_chunk_decoder import ChunkDecoder

    with gc_paused():  # as the importer: many short-lived objects, no cycles
        reply = ChunkDecoder(compress, drop).read_file(file, path)
    release_freed_memory()
    return reply


__all__ = ["decode_file", "read_on_cluster"]
