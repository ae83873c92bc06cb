"""A trace file's ``deviceProperties``: the entry of one device, read the same way everywhere.

Kineto lists one entry per GPU, ``id`` being the device index. A file that lists one id twice
(edited, or merged by hand) was read as its first entry by one reader and could be read
otherwise by another; :func:`device_entry` is the one rule (the first entry of that id), and
the import warns of the repeat (:func:`warn_repeated_ids`), naming the file and the id.
"""

from __future__ import annotations

from typing import Any

__all__ = ["device_entries", "device_entry", "repeated_ids", "warn_repeated_ids"]


def device_entries(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The file's ``deviceProperties`` entries that are objects (others are not read)."""
    listed = metadata.get("deviceProperties")
    if not isinstance(listed, list):
        return []
    return [p for p in listed if isinstance(p, dict)]


def device_entry(metadata: dict[str, Any], device: int | None) -> dict[str, Any] | None:
    """The entry of ``device``: the first whose ``id`` it is (None: no such entry)."""
    return next((p for p in device_entries(metadata) if p.get("id") == device), None)


def repeated_ids(metadata: dict[str, Any]) -> list[Any]:
    """The ``id`` values that more than one entry has, in order of first appearance."""
    seen: dict[Any, int] = {}
    for p in device_entries(metadata):
        key = p.get("id")
        if isinstance(key, (int, str)) and not isinstance(key, bool):
            seen[key] = seen.get(key, 0) + 1
    return [k for k, n in seen.items() if n > 1]


def warn_repeated_ids(trace: Any) -> None:
    """Add a warning to a Trace's import warnings for each file that lists a device twice."""
    for info in trace.ranks:
        for key in repeated_ids(info.metadata or {}):
            names = [
                str(p.get("name", "?")) for p in device_entries(info.metadata) if p.get("id") == key
            ]
            w = trace.warnings  # first: no list of skipped events may push it out
            w.samples.insert(
                0,
                f"{info.source}: deviceProperties lists device {key!r} {len(names)} times "
                f"({', '.join(repr(n) for n in names)}): the first is used",
            )
            del w.samples[w.limit :]
