"""The import cache: a trace opened once re-opens from memory-mapped columns, not from JSON.

:func:`gpuviz.trace.kineto.load_trace`, the one function every command and the app load
traces with, goes through :func:`load_cached`. After a file's first import its :class:`Trace`
is written as one entry (:mod:`gpuviz.trace.cache_entry`: ``.npy`` columns and a JSON
manifest, never pickle) under the user cache folder, and later loads map it back.

- Where: ``$GPUVIZ_CACHE_DIR/traces`` when that is set, else ``platformdirs``'
  ``user_cache_dir("gpuviz")/traces`` (``$XDG_CACHE_HOME/gpuviz/traces`` on Linux).
- Key: the TRACE's real path and, for each of its files, real path, size, modification time,
  status-change time (ns) and inode, plus :data:`FORMAT_VERSION` and the gpuviz version. Size
  and mtime alone were not enough: ``cp -p``, ``rsync -t``, ``tar`` or ``touch -r`` give a new
  file the old ones, and it was served stale; such a file has another inode, or, rewritten in
  place, a new ctime, which no call can set. Any change makes a miss, and the file is imported
  again; the new entry replaces the old one of the same path. A file modified
  in the last :data:`RACY_NS` is not cached yet: a rewrite that soon could keep size and mtime.
- A folder of rank files is one entry, not one per file: the folder's Trace is more than its
  files (ranks numbered from all files together, one time zero, one symbol table and track
  order), so a per-file cache would need a second assembly path that must give the importer's
  result exactly. Rank folders are written once by one job, so a partly changed folder is rare;
  a changed, added or removed file re-imports the folder.
- Writes are atomic (a temporary folder renamed into place), so two processes importing the
  same file at once leave one whole entry. Reads validate everything (see ``read_entry``) and
  a bad entry is deleted and re-imported: never trusted, never a crash. A cache that cannot be
  written (read-only disk, full disk) only costs the next open its import.
- Size: at most ``GPUVIZ_CACHE_MAX_BYTES`` (default 5 GB; ``500M``, ``2G``, ``1GiB`` are
  understood); the least recently used entries go first.
- Off: ``GPUVIZ_NO_CACHE=1`` (what the CLI's ``--no-cache`` sets), or ``cache=False``.

Bump :data:`FORMAT_VERSION` when the Trace model or the importer's output changes.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

# The entry's reading and writing (numpy, msgspec) are imported where used: finding an entry
# and its kept output (gpuviz.trace.cache_memo) needs neither. So are hashlib (OpenSSL's start), uuid,
# shutil and logging: a command run with the cache off (``--no-cache``) uses none of them, and
# a process's start-up is what ``gpuviz summary`` is timed by (issue 25).
from gpuviz.trace.cache_key import MANIFEST, CacheKey, key_bytes, source_stat
from gpuviz.trace.errors import ImportCancelledError
from gpuviz.trace.memory_budget import parse_bytes

if TYPE_CHECKING:
    import logging

    from gpuviz.trace.model import Trace

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMAT_VERSION",
    "CacheEntryInfo",
    "TraceCache",
    "cache_enabled",
    "clear_cache",
    "from_cache",
    "load_cached",
    "parse_bytes",
]

FORMAT_VERSION = 6  # 2: the args text as zlib blocks; 3: a CRC-32 of every file, inode and
# ctime; 4: a CRC-32 of every 8 MiB block of a file (checked on several cores); 5: the key as
# JSON arrays (named by key_bytes, without msgspec); 6: a folder stored only when its files
# are one job (trace.one_job): an older entry may hold unrelated files merged as ranks
"""The layout of an entry and the meaning of its columns; entries of another version are
never read."""

DEFAULT_MAX_BYTES = 5 * 10**9
"""The cache's default size cap: 5 GB."""

ENV_DIR = "GPUVIZ_CACHE_DIR"
ENV_OFF = "GPUVIZ_NO_CACHE"
ENV_MAX = "GPUVIZ_CACHE_MAX_BYTES"

RACY_NS = 3 * 10**9
"""Files modified less than this long ago (ns) are not cached yet (coarse mtimes: FAT 2 s)."""

_STALE_TEMP_S = 3600.0  # a temporary folder this old belongs to a writer that died


def _log() -> logging.Logger:
    import logging

    return logging.getLogger(__name__)


EVICT_SHARE = 1 / 16
"""A process evicts (:meth:`TraceCache.evict`) once its puts since its last eviction add up to
this share of the cap."""
_UNEVICTED: dict[str, int] = {}  # cache folder -> bytes this process put since it evicted

# Traces that load_cached answered from the cache (by id; the value keeps no trace alive).
_FROM_CACHE: weakref.WeakValueDictionary[int, Trace] = weakref.WeakValueDictionary()

Importer = Callable[..., "Trace"]


class CacheEntryInfo(NamedTuple):
    """One entry on disk.

    A NamedTuple, not a dataclass: :mod:`dataclasses` imports :mod:`inspect`, a tenth of a
    process that prints a kept output (:mod:`gpuviz.trace.cache_memo`).

    Attributes
    ----------
    path : Path
        Its folder.
    size_bytes : int
        The bytes of its files.
    last_used : float
        When it was last written or read (seconds since the epoch).
    """

    path: Path
    size_bytes: int
    last_used: float


def cache_enabled() -> bool:
    """False when ``GPUVIZ_NO_CACHE`` is set to anything but ``0``/``false``/``no``/``off``."""
    value = os.environ.get(ENV_OFF, "").strip().lower()
    return value in ("", "0", "false", "no", "off")


class TraceCache:
    """The entries under one folder, with their size cap.

    Parameters
    ----------
    root : Path
        The folder that holds the entries (created on the first write).
    max_bytes : int
        The most the entries may take together; least recently used ones are deleted first.
    """

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root)
        self.max_bytes = int(max_bytes)

    @classmethod
    def default(cls) -> TraceCache | None:
        """The user's cache (see the module's notes), or None where it has no place.

        The cap comes from ``GPUVIZ_CACHE_MAX_BYTES``; a value that is not a size is reported
        (a logged warning) and the default is used.
        """
        base = os.environ.get(ENV_DIR)
        if not base:
            try:
                import platformdirs
            except ImportError:  # a stripped environment: no cache rather than a guessed place
                return None
            base = platformdirs.user_cache_dir("gpuviz", appauthor=False)
        max_bytes = DEFAULT_MAX_BYTES
        text = os.environ.get(ENV_MAX, "").strip()
        if text:
            try:
                max_bytes = parse_bytes(text)
            except ValueError as exc:
                _log().warning("gpuviz: %s=%s: %s; using 5 GB", ENV_MAX, text, exc)
        return cls(Path(base) / "traces", max_bytes)

    # -- keys ------------------------------------------------------------------------------
    def key(
        self, path: str | os.PathLike[str], files: Sequence[str | os.PathLike[str]]
    ) -> CacheKey:
        """The key of a TRACE path and the files it stands for, from their current stat.

        Raises
        ------
        OSError
            A file cannot be stat'ed.
        """
        from gpuviz import __version__

        stats = tuple(source_stat(f) for f in files)
        return CacheKey(FORMAT_VERSION, __version__, os.path.realpath(path), stats)

    def entry_path(self, key: CacheKey) -> Path:
        """The folder of ``key``'s entry: ``<hash of the path>-<hash of the whole key>``."""
        return self.root / f"{_path_hash(key.path)}-{_digest(key_bytes(key))}"

    def holds(self, key: CacheKey) -> bool:
        """Whether ``key``'s entry is on disk, whole (its manifest is written last); its
        columns are not read or checked."""
        return (self.entry_path(key) / MANIFEST).is_file()

    # -- read and write --------------------------------------------------------------------
    def get(self, key: CacheKey, sources: list[str]) -> Trace | None:
        """The cached Trace of ``key``, or None (no entry, or a bad one, which is deleted).

        Parameters
        ----------
        key : CacheKey
        sources : list of str
            The TRACE's files as the caller names them (see ``read_entry``).
        """
        from gpuviz.trace.cache_entry import CorruptEntryError, read_entry

        folder = self.entry_path(key)
        if not folder.is_dir():
            return None
        try:
            trace = read_entry(folder, key, sources)
        except CorruptEntryError as exc:
            _log().info("gpuviz cache: %s; importing again", exc)
            self._discard(folder)
            return None
        try:
            os.utime(folder / MANIFEST)  # last used: what the LRU cap goes by
        except OSError:
            pass
        return trace

    def put(self, key: CacheKey, trace: Trace, sources: list[str]) -> Path | None:
        """Store ``trace`` as the entry of ``key``; returns its folder, or None if not stored.

        Never raises for a cache that cannot be written: it logs and returns None. A trace
        larger than the cap is not stored. Older entries of the same path are deleted, then
        the least recently used ones until the cap holds.
        """
        import msgspec

        from gpuviz.trace.cache_entry import entry_bytes, write_entry

        if entry_bytes(trace) > self.max_bytes:
            return None
        final = self.entry_path(key)
        import shutil
        import uuid

        temp = self.root / f".tmp-{uuid.uuid4().hex}"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            temp.mkdir()
            write_entry(temp, trace, key, sources)
            try:
                os.rename(temp, final)
            except OSError:
                if not final.is_dir():
                    raise
                # Another process wrote the same key first: its entry is as good as ours.
                shutil.rmtree(temp, ignore_errors=True)
        except (OSError, ValueError, TypeError, OverflowError, msgspec.MsgspecError) as exc:
            _log().info("gpuviz cache: cannot store %s: %s", key.path, exc)
            shutil.rmtree(temp, ignore_errors=True)
            return None
        prefix = final.name.split("-")[0] + "-"
        for other in self._entry_folders():
            if other.name.startswith(prefix) and other != final:
                self._discard(other)  # the same path's entry for an older file or version
        # An eviction reads the size of every entry: once per put, the entries of a
        # 1,000-rank folder (one per rank, written by the ranks' children or a cluster's
        # workers) cost work quadratic in the ranks (85 ms a put at 256 entries on the VM).
        # So a process evicts once it has written EVICT_SHARE of the cap since it last did:
        # the cap holds to within that share per writing process.
        root = str(self.root)
        _UNEVICTED[root] = _UNEVICTED.get(root, 0) + _folder_size(final)  # as evict counts
        if _UNEVICTED[root] >= self.max_bytes * EVICT_SHARE:
            _UNEVICTED[root] = 0
            self.evict(keep=final)
        return final

    # -- size ------------------------------------------------------------------------------
    def entries(self) -> list[CacheEntryInfo]:
        """The entries on disk, least recently used first."""
        out = []
        for folder in self._entry_folders():
            size, used = _folder_size(folder), 0.0
            try:
                used = (folder / MANIFEST).stat().st_mtime
            except OSError:  # half deleted, or no manifest: oldest of all
                pass
            out.append(CacheEntryInfo(folder, size, used))
        return sorted(out, key=lambda e: e.last_used)

    def size_bytes(self) -> int:
        """The bytes the cache takes on disk now (entries and unfinished writes)."""
        if not self.root.is_dir():
            return 0
        return sum(_folder_size(Path(e.path)) for e in os.scandir(self.root) if e.is_dir())

    def evict(self, keep: Path | None = None) -> int:
        """Delete least recently used entries until the cap holds; returns the bytes freed.

        ``keep`` (the entry just written) is never deleted. Temporary folders that writers
        left behind more than an hour ago are deleted too.
        """
        freed = 0
        now = time.time()
        if self.root.is_dir():
            for d in os.scandir(self.root):
                if d.name.startswith(".") and d.is_dir():
                    try:
                        old = now - d.stat().st_mtime > _STALE_TEMP_S
                    except OSError:
                        continue
                    if old:
                        freed += self._discard(Path(d.path))
        entries = self.entries()
        total = sum(e.size_bytes for e in entries)
        for e in entries:
            if total <= self.max_bytes:
                break
            if keep is not None and e.path == keep:
                continue
            freed += self._discard(e.path)
            total -= e.size_bytes
        return freed

    def clear(self) -> int:
        """Delete every entry; returns the bytes freed."""
        before = self.size_bytes()
        if self.root.is_dir():
            for e in os.scandir(self.root):
                if e.is_dir():
                    self._discard(Path(e.path))
        return max(before - self.size_bytes(), 0)

    # -- helpers ---------------------------------------------------------------------------
    def _entry_folders(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return [Path(e.path) for e in os.scandir(self.root) if not e.name.startswith(".")
                and e.is_dir()]  # fmt: skip

    def _discard(self, folder: Path) -> int:
        """Delete an entry: first renamed away, so that no reader sees it half deleted."""
        import shutil
        import uuid

        size = _folder_size(folder)
        trash = self.root / f".trash-{uuid.uuid4().hex}"
        try:
            os.rename(folder, trash)
        except OSError:
            trash = folder  # gone already, or in use where renaming is refused
        shutil.rmtree(trash, ignore_errors=True)
        return size if not folder.exists() else 0


def load_cached(
    path: str | os.PathLike[str],
    files: Sequence[str | os.PathLike[str]],
    importer: Importer,
    *,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    cache: TraceCache | None = None,
) -> Trace:
    """Load a TRACE from the cache, or import it with ``importer`` and cache the result.

    Parameters
    ----------
    path : str or PathLike
        The TRACE (file or folder).
    files : sequence of path
        The files it stands for (``trace_files(path)``).
    importer : callable
        ``importer(path, progress=..., cancelled=...) -> Trace``: the real import.
    progress, cancelled : callable, optional
        As for ``load_trace``; a cache hit reports 1.0 once.
    cache : TraceCache, optional
        The cache to use; default :meth:`TraceCache.default`. With ``GPUVIZ_NO_CACHE`` set,
        or no cache folder, this is just ``importer``.

    Returns
    -------
    Trace
        From the cache its columns are read-only memory maps.
    """
    if cache is None and cache_enabled():
        cache = TraceCache.default()
    if cache is None or not cache_enabled():
        return importer(path, progress=progress, cancelled=cancelled)
    sources = [str(f) for f in files]
    try:
        key = cache.key(path, files)
    except OSError:
        return importer(path, progress=progress, cancelled=cancelled)
    if cancelled is not None and cancelled():
        raise ImportCancelledError(str(path))
    trace = cache.get(key, sources)
    if trace is not None:
        _FROM_CACHE[id(trace)] = trace
        if progress is not None:
            progress(1.0)
        return trace
    trace = importer(path, progress=progress, cancelled=cancelled)
    try:
        unchanged = cache.key(path, files) == key
    except OSError:
        unchanged = False
    # A file that changed while it was read is not cached under the old key, nor is one
    # written just now: a rewrite within the file system's timestamp granularity could keep
    # its size and mtime (git's "racy clean" problem).
    # Nor is an import that left parts out to fit its memory limit: it is not the trace.
    if unchanged and not _racy(key) and not trace.dropped:
        cache.put(key, trace, sources)
    return trace


def _racy(key: CacheKey) -> bool:
    newest = max((f.mtime_ns for f in key.files), default=0)
    return time.time_ns() - newest < RACY_NS


def from_cache(trace: Trace) -> bool:
    """Whether ``trace`` was answered from the cache by :func:`load_cached`."""
    return _FROM_CACHE.get(id(trace)) is trace


def clear_cache(cache: TraceCache | None = None) -> int:
    """Delete the user's cached traces (or ``cache``'s); returns the bytes freed."""
    cache = cache if cache is not None else TraceCache.default()
    return cache.clear() if cache is not None else 0


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]


def _path_hash(path: str) -> str:
    return _digest(os.fsencode(path))


def _folder_size(folder: Path) -> int:
    total = 0
    try:
        with os.scandir(folder) as it:
            for e in it:
                try:
                    total += e.stat(follow_symlinks=False).st_size
                except OSError:
                    pass
    except OSError:
        pass
    return total
