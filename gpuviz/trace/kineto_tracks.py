"""The lanes and tracks of one Kineto file, numbered chunk by chunk with vectorized lookups."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import TrackKind

Array = npt.NDArray[Any]


@dataclass
class TrackTable:
    """The lanes and tracks of one file, filled chunk by chunk.

    A lane is a (pid, tid) pair as the file had it; a track is a timeline row of the model:
    ``(TrackKind.GPU_*, device, stream)`` or ``(TrackKind.CPU_*, lane)``.
    """

    lanes: dict[tuple[int, int], int] = field(default_factory=dict)
    tracks: dict[tuple[int, int, int], int] = field(default_factory=dict)
    # track id -> (pid, tid) of the first slice seen on it
    track_lane: dict[int, tuple[int, int]] = field(default_factory=dict)
    # lane id -> the GPU stream track of its GPU activity (flows there land on that track)
    lane_gpu: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._values: dict[str, KeyIndex] = {n: KeyIndex() for n in ("pid", "tid", "a", "b")}
        self._lane_index = KeyIndex()
        self._track_index = KeyIndex()
        self._gpu_pairs = KeyIndex()

    def _small(self, name: str, values: Array) -> Array:
        # Each distinct value of a column gets a small number (its order of first sight).
        index = self._values[name]

        def number(key: int, row: int) -> int:
            index.count += 1
            return index.count - 1

        return index.lookup(values, number)

    def lane_ids(self, pid: Array, tid: Array) -> Array:
        """File lane ids of each (pid, tid)."""
        if not len(pid):
            return np.empty(0, np.int32)
        key = (self._small("pid", pid) << 31) | self._small("tid", tid)
        lanes = self.lanes

        def new_lane(_: int, row: int) -> int:
            return lanes.setdefault((int(pid[row]), int(tid[row])), len(lanes))

        return self._lane_index.lookup(key, new_lane).astype(np.int32)

    def track_ids(self, kind: Array, a: Array, b: Array, pid: Array, tid: Array) -> Array:
        """File track ids of rows keyed ``(kind, a, b)``; remembers a (pid, tid) for each."""
        if not len(kind):
            return np.empty(0, np.int32)
        key = (kind.astype(np.int64) << 58) | (self._small("a", a) << 29) | self._small("b", b)
        tracks = self.tracks

        def new_track(_: int, row: int) -> int:
            k = (int(kind[row]), int(a[row]), int(b[row]))
            v = tracks.get(k)
            if v is None:
                v = tracks[k] = len(tracks)
                self.track_lane[v] = (int(pid[row]), int(tid[row]))
            return v

        return self._track_index.lookup(key, new_track).astype(np.int32)

    def note_gpu_lanes(self, lane: Array, track: Array) -> None:
        """Remember the GPU track of lanes that carry GPU activity."""
        if not len(lane):
            return
        lane_gpu = self.lane_gpu

        def new_pair(_: int, row: int) -> int:
            lane_gpu.setdefault(int(lane[row]), int(track[row]))
            return 0

        self._gpu_pairs.lookup((lane.astype(np.int64) << 31) | track, new_pair)

    def cpu_track(self, lane: int) -> int:
        """The CPU thread track of a lane, made if needed."""
        key = (int(TrackKind.CPU_THREAD), lane, 0)
        v = self.tracks.get(key)
        if v is None:
            v = self.tracks[key] = len(self.tracks)
        return v

    def lane_tracks(self) -> Array:
        """Lane id -> the track that events on that lane (flows, instants, memory) belong to."""
        out = np.empty(len(self.lanes), dtype=np.int32)
        for lane in range(len(self.lanes)):
            t = self.lane_gpu.get(lane)
            out[lane] = self.cpu_track(lane) if t is None else t
        return out


class KeyIndex:
    """int64 keys -> ids, kept sorted: a chunk's keys are looked up with one searchsorted.

    Cheaper than factorizing each chunk (a sort of all its rows) when, as with lanes and
    tracks, a file has few distinct keys and each chunk repeats them.
    """

    def __init__(self) -> None:
        self.keys = np.empty(0, dtype=np.int64)
        self.ids = np.empty(0, dtype=np.int64)
        self.count = 0  # for callers that number keys in order of first sight

    def lookup(self, keys: Array, assign: Callable[[int, int], int]) -> Array:
        """The id of each key; ``assign(key, row)`` gives the id of a key not seen before
        (``row``: its first row in ``keys``)."""
        keys = keys.astype(np.int64, copy=False)
        pos = np.searchsorted(self.keys, keys)
        if len(self.keys):
            np.minimum(pos, len(self.keys) - 1, out=pos)
            miss = np.flatnonzero(self.keys[pos] != keys)
        else:
            miss = np.arange(len(keys))
        if miss.size:
            new, first = np.unique(keys[miss], return_index=True)
            new_ids = [assign(k, int(miss[f])) for k, f in zip(new.tolist(), first.tolist())]
            all_keys = np.concatenate([self.keys, new])
            order = np.argsort(all_keys)
            self.keys = all_keys[order]
            self.ids = np.concatenate([self.ids, np.asarray(new_ids, dtype=np.int64)])[order]
            pos = np.searchsorted(self.keys, keys)
        return self.ids[pos]


__all__ = ["KeyIndex", "TrackTable"]
