"""What a cache entry is keyed by, on the standard library alone (no numpy, no msgspec).

:mod:`gpuviz.trace.cache_entry` writes and reads entries; these types are here so that a
command can find an entry and its kept output (:mod:`gpuviz.trace.cache_memo`) without
importing numpy (about 0.1 s of a process) or msgspec (with the ``typing_extensions`` and
``inspect`` it imports, a quarter of a process that prints a kept output: issue 25).
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

__all__ = ["MANIFEST", "CacheKey", "SourceStat", "key_bytes", "source_stat"]

MANIFEST = "manifest.json"
"""The entry's manifest file: written last; its mtime is the entry's last use."""


class SourceStat(NamedTuple):
    """What identifies one source file's content: real path, size, times and inode.

    Size and modification time alone are not enough: ``cp -p``, ``rsync -t``, ``tar`` and
    ``touch -r`` give another file the same ones. A replaced file has another inode (or, if
    rewritten in place, a new ``st_ctime_ns``, which no user call can set back).
    """

    path: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int


def source_stat(path: str | os.PathLike[str]) -> SourceStat:
    """The :class:`SourceStat` of one file as it is now (the cache's key and the agents'
    server's change check: one definition of "the same file").

    Raises
    ------
    OSError
        The file cannot be stat'ed.
    """
    st = os.stat(path)
    return SourceStat(os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class CacheKey(NamedTuple):
    """What an entry was made from; a different key means a different entry.

    Attributes
    ----------
    format : int
        The cache's format version (:data:`gpuviz.trace.cache.FORMAT_VERSION`).
    gpuviz : str
        The gpuviz version that imported it.
    path : str
        The real path of the TRACE (file or folder).
    files : tuple of SourceStat
        Every file it stands for, in name order.
    """

    format: int
    gpuviz: str
    path: str
    files: tuple[SourceStat, ...]


def key_bytes(key: CacheKey) -> bytes:
    """``key`` as canonical bytes, what its entry's name and its kept outputs go by.

    JSON arrays in field order, ASCII only: a path that is not valid UTF-8 (lone surrogates,
    from ``surrogateescape``) is written as escapes rather than refused.
    """
    return json.dumps(key, ensure_ascii=True, separators=(",", ":")).encode("ascii")
