"""One entry of the import cache: a :class:`Trace` as a folder of ``.npy`` files and a manifest.

Every numpy column of the Trace is one ``.npy`` file (numpy's own format, written and read with
``allow_pickle=False``), memory-mapped on load, so that re-opening costs page-table work, not
a parse. What is not a column goes into ``manifest.json`` (decoded with a typed schema): the
key the entry was written for, each file's dtype, length and byte size, the ranks' metadata,
the warnings and the ``ph: M`` events. Strings are never pickled either: the symbol table is
one UTF-8 text (``symbols.text.npy``, ``uint8``) and the character offsets of its strings
(``symbols.offsets.npy``); the events' ``args`` are their JSON text and offsets, as
:class:`~gpuviz.trace.model.ArgsStore` holds them: zlib blocks as the importer made them
(``args.blob.npy``, the blocks' compressed offsets ``args.zoffsets.npy`` and uncompressed
starts ``args.starts.npy``), or plain text in ``args.blob.npy`` (the two block files then empty).

:func:`read_entry` trusts nothing: a missing or extra file, a file whose size, dtype, length or
CRC-32 is not the manifest's, a manifest whose own CRC-32 does not match or that does not
decode, or ids that point outside their tables raise :class:`CorruptEntryError`, which the
cache answers by importing the file again. Every byte of every file is checksummed: a column's
values (a track's rank, a memory event's device) cannot all be checked for sense, and one
flipped byte in them once gave wrong figures on every later open. CRC-32 finds every error of
up to 32 bits in a row. Each file is memory-mapped once and its CRC taken over that mapping,
which the column then uses (reading the files into buffers to checksum them had cost as much
as the CRC itself: 0.06 s of 0.12 s at 300k kernels on a 2-core box); and the manifest keeps
one CRC per :data:`CRC_BLOCK` bytes, so that the blocks of every file are checked on several
cores at once (zlib reads 3-7 GB/s on one).
"""

from __future__ import annotations

import itertools
import mmap
import os
import threading
import zlib
from dataclasses import fields
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.trace.args_text import BlockText, PlainText
from gpuviz.trace.cache_key import MANIFEST, CacheKey
from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.model import (
    NARROWED_COLUMNS,
    ArgsStore,
    Flows,
    Instants,
    MemoryEvents,
    RankInfo,
    Slices,
    SymbolTable,
    Trace,
    Tracks,
)

CRC_BLOCK = 8 << 20
"""The manifest holds a CRC-32 of each run of this many bytes of a file (the last one shorter),
so that one large column (the args text) is checked on several cores, not on one."""

CRC_THREADS_MAX = 8
"""The most threads that check the CRCs of one entry (past that, memory bandwidth binds)."""

# The column tables of a Trace, by attribute name.
TABLES: dict[str, Any] = {
    "slices": Slices,
    "tracks": Tracks,
    "flows": Flows,
    "memory": MemoryEvents,
    "instants": Instants,
}


class CorruptEntryError(ValueError):
    """A cache entry that cannot be trusted (truncated, missing files, wrong dtypes …)."""


class FileSpec(msgspec.Struct, frozen=True, array_like=True):
    """One ``.npy`` file of an entry: what reading it must find.

    ``crc32`` holds the CRC-32 of each :data:`CRC_BLOCK` bytes of the file in turn, header
    included (one value for a small file, none for an empty one).
    """

    dtype: str
    length: int
    nbytes: int
    crc32: tuple[int, ...]


class RankEntry(msgspec.Struct, frozen=True):
    """A :class:`RankInfo`, with the index of its file in the TRACE's file list."""

    rank: int | None
    file: int
    source: str
    metadata: dict[str, Any]
    offset_ns: int
    event_count: int


class Manifest(msgspec.Struct, frozen=True):
    """Everything of an entry that is not a column, and the specs of the columns' files.

    ``crc32`` is the CRC-32 (8 hex digits) of the file's bytes after the field; it is the
    first field, so it sits at a fixed place (see :func:`read_manifest`).
    """

    crc32: str
    key: CacheKey
    zero_ns: int
    event_count: int
    warning_count: int
    warning_samples: list[str]
    warning_limit: int
    ranks: list[RankEntry]
    metadata_events: list[dict[str, Any]]
    files: dict[str, FileSpec]


def entry_bytes(trace: Trace) -> int:
    """About how many bytes an entry of ``trace`` takes on disk (its columns and strings)."""
    text = trace.args.text
    n = (len(text.data) if isinstance(text, BlockText) else len(text)) + trace.args.offsets.nbytes
    for name in TABLES:
        table = getattr(trace, name)
        n += sum(getattr(table, f.name).nbytes for f in fields(table))
    return n + sum(len(s) for s in trace.symbols.strings)


def write_entry(folder: Path, trace: Trace, key: CacheKey, sources: list[str]) -> None:
    """Write ``trace`` into the new, empty ``folder``; the manifest is written last.

    Parameters
    ----------
    folder : Path
        A fresh folder; the cache renames it into place once this returns.
    trace : Trace
        A freshly imported trace.
    key : CacheKey
        What it was imported from.
    sources : list of str
        The TRACE's files as the importer named them (``trace_files`` order), so that each
        rank's file is stored as an index into the list the reader will have.

    Raises
    ------
    OSError
        The folder cannot be written (full disk, no permission).
    msgspec.EncodeError, TypeError, ValueError
        Something in the metadata cannot be written as JSON (the trace is then not cached).
    """
    specs: dict[str, FileSpec] = {}

    def save(name: str, array: npt.NDArray[Any]) -> None:
        path = folder / f"{name}.npy"
        np.save(path, np.ascontiguousarray(array), allow_pickle=False)
        nbytes, crcs = _file_crcs(path)
        specs[name] = FileSpec(array.dtype.str, len(array), nbytes, crcs)

    for table_name in TABLES:
        table = getattr(trace, table_name)
        for f in fields(table):
            save(f"{table_name}.{f.name}", getattr(table, f.name))
    strings = trace.symbols.strings
    text = "".join(strings).encode("utf-8", "surrogatepass")
    lengths = np.fromiter(map(len, strings), np.int64, len(strings))
    save("symbols.text", np.frombuffer(text, np.uint8))
    save("symbols.offsets", np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)]))
    args = trace.args.text
    if isinstance(args, BlockText):  # stored as the importer compressed it
        blob: Any = args.data
        zoffsets, starts = args.zoffsets, args.starts
    else:
        blob, zoffsets = args.blob, np.empty(0, np.int64)
        starts = zoffsets
    save("args.blob", np.frombuffer(memoryview(blob), np.uint8))
    save("args.offsets", trace.args.offsets.astype(np.int64, copy=False))
    save("args.zoffsets", zoffsets.astype(np.int64, copy=False))
    save("args.starts", starts.astype(np.int64, copy=False))

    file_index = {s: i for i, s in enumerate(sources)}
    warnings = trace.warnings if isinstance(trace.warnings, ImportWarnings) else ImportWarnings()
    manifest = Manifest(
        crc32=_NO_CRC,
        key=key,
        zero_ns=int(trace.zero_ns),
        event_count=int(trace.event_count),
        warning_count=warnings.count,
        warning_samples=list(warnings.samples),
        warning_limit=warnings.limit,
        ranks=[
            RankEntry(
                rank=r.rank,
                file=file_index.get(r.source, -1),
                source=r.source,
                metadata=r.metadata,
                offset_ns=int(r.offset_ns),
                event_count=int(r.event_count),
            )
            for r in trace.ranks
        ],
        metadata_events=trace.metadata_events,
        files=specs,
    )
    data = msgspec.json.encode(manifest)
    if not data.startswith(_CRC_HEAD + _NO_CRC.encode() + _CRC_TAIL):  # msgspec's field order
        raise ValueError("the manifest does not start with its CRC field")
    crc = f"{zlib.crc32(data[_CRC_END:]):08x}".encode()
    (folder / MANIFEST).write_bytes(_CRC_HEAD + crc + data[_CRC_END - len(_CRC_TAIL) :])


# The manifest starts {"crc32":"<8 hex digits>", and the CRC covers every byte after them.
_NO_CRC = "00000000"
_CRC_HEAD = b'{"crc32":"'
_CRC_TAIL = b'",'
_CRC_END = len(_CRC_HEAD) + len(_NO_CRC) + len(_CRC_TAIL)


def read_manifest(folder: Path) -> Manifest:
    """The decoded, schema-checked manifest of an entry, its CRC-32 checked.

    Raises
    ------
    CorruptEntryError
        It is missing, unreadable, damaged (CRC), not JSON, or not of the manifest's schema.
    """
    path = folder / MANIFEST
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptEntryError(f"{path}: {exc}") from None
    crc = data[len(_CRC_HEAD) : _CRC_END - len(_CRC_TAIL)]
    if (
        not data.startswith(_CRC_HEAD)
        or data[_CRC_END - len(_CRC_TAIL) : _CRC_END] != _CRC_TAIL
        or crc != f"{zlib.crc32(data[_CRC_END:]):08x}".encode()
    ):
        raise CorruptEntryError(f"{path}: its CRC-32 does not match (damaged)")
    try:
        return msgspec.json.decode(data, type=Manifest)
    except (msgspec.MsgspecError, UnicodeError) as exc:
        raise CorruptEntryError(f"{path}: {exc}") from None


def _file_crcs(path: Path) -> tuple[int, tuple[int, ...]]:
    """The size of a file and the CRC-32 of each :data:`CRC_BLOCK` bytes of it, in turn."""
    crcs = []
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(CRC_BLOCK):
            crcs.append(zlib.crc32(chunk))
            n += len(chunk)
    return n, tuple(crcs)


def read_entry(folder: Path, key: CacheKey, sources: list[str]) -> Trace:
    """Read an entry back as a Trace whose columns are memory-mapped (read-only).

    Parameters
    ----------
    folder : Path
        The entry.
    key : CacheKey
        The key the caller expects; an entry written for another key is not used.
    sources : list of str
        The TRACE's files as the caller names them now (``RankInfo.source`` takes these, so
        the figures name the files as a fresh import would).

    Returns
    -------
    Trace

    Raises
    ------
    CorruptEntryError
        Anything about the entry is not as its manifest says, or the manifest is not for
        ``key``.
    """
    manifest = read_manifest(folder)
    if manifest.key != key:
        raise CorruptEntryError(f"{folder}: written for another file, version or format")
    try:
        return _build(folder, manifest, sources)
    except CorruptEntryError:
        raise
    except (OSError, ValueError, TypeError, KeyError, IndexError, UnicodeError) as exc:
        raise CorruptEntryError(f"{folder}: {type(exc).__name__}: {exc}") from None


def _build(folder: Path, manifest: Manifest, sources: list[str]) -> Trace:
    specs = manifest.files
    expected = _expected_files()
    if set(specs) != set(expected):
        raise CorruptEntryError(f"{folder}: the manifest lists other files than a Trace's")

    # Every file is mapped first, then all their blocks are checked at once, on several cores;
    # nothing reads a column before its bytes have passed.
    columns = {
        name: _map_column(folder, name, specs[name], dtype) for name, dtype in expected.items()
    }
    _check_crcs(folder, [(name, columns[name][1], specs[name].crc32) for name in expected])

    def load(name: str) -> npt.NDArray[Any]:
        return columns[name][0]

    tables = {}
    for table_name, cls in TABLES.items():
        cols = {f.name: load(f"{table_name}.{f.name}") for f in fields(cls)}
        if len({len(c) for c in cols.values()}) > 1:
            raise CorruptEntryError(f"{folder}: the columns of {table_name} differ in length")
        tables[table_name] = cls(**cols)

    symbols = _read_symbols(folder, load("symbols.text"), load("symbols.offsets"))
    args = _read_args(folder, load)
    _check_ids(folder, tables, len(symbols), len(args))

    # A rank's file index points into the caller's current file list (same key, same files).
    renamed: dict[str, str] = {}
    ranks = []
    for r in manifest.ranks:
        if not 0 <= r.file < len(sources):
            raise CorruptEntryError(f"{folder}: a rank's file index is out of range")
        source = sources[r.file]
        if source != r.source:
            renamed[r.source] = source
        ranks.append(RankInfo(r.rank, source, r.metadata, r.offset_ns, r.event_count))
    samples = manifest.warning_samples
    for old, new in renamed.items():  # warnings name the file as it was spelled on import
        samples = [s.replace(old, new) for s in samples]
    warnings = ImportWarnings(manifest.warning_count, samples, manifest.warning_limit)
    return Trace(
        symbols=symbols,
        args=args,
        ranks=ranks,
        zero_ns=manifest.zero_ns,
        event_count=manifest.event_count,
        warnings=warnings,
        metadata_events=manifest.metadata_events,
        **tables,
    )


def _read_args(folder: Path, load: Any) -> ArgsStore:
    """The args store of an entry, its offsets checked (its bytes were, by CRC-32)."""
    blob, offsets = load("args.blob"), load("args.offsets")
    zoffsets, starts = load("args.zoffsets"), load("args.starts")
    text: PlainText | BlockText
    if len(starts) or len(zoffsets):
        if len(starts) != len(zoffsets) or starts[0] != 0 or zoffsets[0] != 0:
            raise CorruptEntryError(f"{folder}: the args blocks' offsets do not match")
        if (
            zoffsets[-1] != len(blob)
            or np.any(np.diff(zoffsets) < 0)
            or np.any(np.diff(starts) < 0)
        ):
            raise CorruptEntryError(f"{folder}: the args blocks do not span their bytes")
        text = BlockText(blob.data, zoffsets, starts)
        size = len(text)
    else:
        text = PlainText(blob.data)  # a memoryview: bytes(blob[a:b]) as before
        size = len(blob)
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != size:
        raise CorruptEntryError(f"{folder}: the args offsets do not span the args text")
    if len(offsets) > 1 and np.any(np.diff(offsets) < 0):
        raise CorruptEntryError(f"{folder}: the args offsets go backwards")
    return ArgsStore(offsets=offsets, text=text)


NARROWED = frozenset(f"{t}.{c}" for t, cols in NARROWED_COLUMNS.items() for c in cols)
"""Files of either width (:data:`~gpuviz.trace.model.NARROWED_COLUMNS`): both are read back."""


def _expected_files() -> dict[str, np.dtype[Any]]:
    out: dict[str, np.dtype[Any]] = {}
    for table_name, cls in TABLES.items():
        empty = cls.empty()
        for f in fields(cls):
            out[f"{table_name}.{f.name}"] = getattr(empty, f.name).dtype
    out["symbols.text"] = np.dtype(np.uint8)
    out["symbols.offsets"] = np.dtype(np.int64)
    out["args.blob"] = np.dtype(np.uint8)
    out["args.offsets"] = np.dtype(np.int64)
    out["args.zoffsets"] = np.dtype(np.int64)
    out["args.starts"] = np.dtype(np.int64)
    return out


def _map_column(
    folder: Path, name: str, spec: FileSpec, dtype: np.dtype[Any]
) -> tuple[npt.NDArray[Any], mmap.mmap]:
    """A column's ``.npy`` file mapped read-only (whole, header included), and its values.

    The values are a plain, read-only ndarray over the mapping; its CRCs are checked by the
    caller (:func:`_check_crcs`) over the same mapping, so the pages the check touches are the
    ones the analyses read next.
    """
    from numpy.lib import format as npy

    path = folder / f"{name}.npy"
    if name in NARROWED and np.dtype(spec.dtype) == np.dtype(np.int32):
        dtype = np.dtype(np.int32)
    if np.dtype(spec.dtype) != dtype:
        raise CorruptEntryError(f"{path}: dtype {spec.dtype}, expected {dtype.str}")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size != spec.nbytes:
            raise CorruptEntryError(f"{path}: {size} bytes, the manifest says {spec.nbytes}")
        try:
            version = npy.read_magic(f)
            if version == (1, 0):
                shape, _, found = npy.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _, found = npy.read_array_header_2_0(f)
            else:
                raise CorruptEntryError(f"{path}: .npy format {version}")
        except CorruptEntryError:
            raise
        except Exception as exc:  # numpy's header parser raises many kinds
            # A damaged header: ValueError, SyntaxError, or (numpy 2 on Python 3.12, a flipped
            # byte that makes a control character) tokenize.TokenError, which is none of those.
            raise CorruptEntryError(
                f"{path}: a damaged .npy header ({type(exc).__name__})"
            ) from None
        offset = f.tell()
        if found != dtype or len(shape) != 1 or shape[0] != spec.length:
            raise CorruptEntryError(
                f"{path}: holds {found.str} of shape {shape}, "
                f"expected {dtype.str} of length {spec.length}"
            )
        if offset + spec.length * dtype.itemsize != size:
            raise CorruptEntryError(f"{path}: {size} bytes, not its header and values")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    # A plain read-only ndarray: it keeps the mapping alive, and never writes the file.
    return np.frombuffer(mapped, dtype=dtype, count=spec.length, offset=offset), mapped


_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


def _check_crcs(folder: Path, files: list[tuple[str, mmap.mmap, tuple[int, ...]]]) -> None:
    """Check every block of every mapped file against its CRC-32, on up to
    :data:`CRC_THREADS_MAX` threads (zlib lets go of the GIL while it sums).

    Raises
    ------
    CorruptEntryError
        A file has another number of blocks than its manifest says, or a block's CRC differs.
    """
    blocks: list[tuple[str, mmap.mmap, int, int]] = []
    for name, mapped, crcs in files:
        n = len(mapped)
        if len(crcs) != -(-n // CRC_BLOCK):
            raise CorruptEntryError(f"{folder / name}.npy: the manifest's CRCs do not fit its size")
        blocks += [(name, mapped, i, crc) for i, crc in enumerate(crcs)]
    bad: list[str] = []
    todo = iter(blocks)  # next() on it is atomic under the GIL: each block goes to one thread

    def work() -> None:
        for name, mapped, i, crc in todo:
            with memoryview(mapped) as view, view[i * CRC_BLOCK : (i + 1) * CRC_BLOCK] as part:
                if zlib.crc32(part) != crc:
                    bad.append(name)
            if _DONTNEED is not None:
                # Unmap the block's pages (they stay in the page cache): the process keeps
                # only what its analyses touch again, not the whole entry (PSS 360 -> ~170 MB
                # at 300k kernels, most of it the args text no summary reads).
                mapped.madvise(
                    _DONTNEED, i * CRC_BLOCK, min(CRC_BLOCK, len(mapped) - i * CRC_BLOCK)
                )

    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    total = sum(len(m) for _, m, _ in files)
    helpers = [
        threading.Thread(target=work, daemon=True)
        for _ in range(min(cores, CRC_THREADS_MAX, total // CRC_BLOCK) - 1)
    ]
    for t in helpers:
        t.start()
    work()
    for t in helpers:
        t.join()
    if bad:
        raise CorruptEntryError(
            f"{folder / bad[0]}.npy: its CRC-32 does not match the manifest's (damaged)"
        )


def _read_symbols(
    folder: Path, text: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]
) -> SymbolTable:
    decoded = text.tobytes().decode("utf-8", "surrogatepass")
    o = offsets.tolist()
    if not o or o[0] != 0 or o[-1] != len(decoded) or any(b < a for a, b in itertools.pairwise(o)):
        raise CorruptEntryError(f"{folder}: the symbol offsets do not span the symbol text")
    strings = [decoded[a:b] for a, b in itertools.pairwise(o)]
    table = SymbolTable(strings)
    if len(table) != len(strings):
        raise CorruptEntryError(f"{folder}: the symbol table repeats a string")
    return table


def _check_ids(folder: Path, tables: dict[str, Any], n_symbols: int, n_args: int) -> None:
    # Ids that point outside their tables would make a later view index out of bounds.
    n_tracks = len(tables["tracks"])
    bounds = {
        "track": (0, n_tracks),
        "name": (0, n_symbols),
        "cat": (0, n_symbols),
        "label": (0, n_symbols),
        "args": (-1, n_args),
    }
    for table_name, table in tables.items():
        for col, (lo, hi) in bounds.items():
            a = getattr(table, col, None)
            if a is not None and len(a) and (int(a.min()) < lo or int(a.max()) >= hi):
                raise CorruptEntryError(f"{folder}: {table_name}.{col} points outside its table")
    track = tables["slices"].track
    if len(track) > 1 and np.any(track[1:] < track[:-1]):
        raise CorruptEntryError(f"{folder}: slices are not sorted by track")
