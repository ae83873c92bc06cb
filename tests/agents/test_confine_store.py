"""The agents' server's path check (:class:`Roots`) and its cache of opened files (:class:`Store`)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from gpuviz.agents.confine import PathRefused, Roots, folder_inside
from gpuviz.agents.store import Store
from gpuviz.errors import BadInputError

DATA = Path(__file__).parents[1] / "data"
TRACE = DATA / "advisor" / "adv_clean.json.gz"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/{a.json.gz, sub/b.json.gz, out.json.gz -> ../secret.json.gz, in -> a.json.gz}"""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.json.gz").write_bytes(b"x")
    (root / "sub" / "b.json.gz").write_bytes(b"x")
    (tmp_path / "secret.json.gz").write_bytes(b"x")
    (root / "out.json.gz").symlink_to(tmp_path / "secret.json.gz")
    (root / "in.json.gz").symlink_to(root / "a.json.gz")
    return root


def test_paths_inside_are_resolved(tree: Path) -> None:
    roots = Roots([tree])
    assert roots.resolve("a.json.gz") == tree.resolve() / "a.json.gz"
    assert roots.resolve("sub/../sub/b.json.gz") == tree.resolve() / "sub" / "b.json.gz"
    assert roots.resolve(str(tree / "a.json.gz")) == tree.resolve() / "a.json.gz"
    assert roots.resolve("in.json.gz") == tree.resolve() / "a.json.gz"  # a link that stays in


def test_a_relative_path_is_found_under_any_root(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "c.json.gz").write_bytes(b"x")
    roots = Roots([tree, other])
    assert roots.resolve("c.json.gz") == other.resolve() / "c.json.gz"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../secret.json.gz", "outside the folders"),
        ("sub/../../secret.json.gz", "outside the folders"),
        ("/etc/passwd", "outside the folders"),
        ("out.json.gz", "a symbolic link that leads outside"),
        ("missing.json.gz", "no such file or folder"),
        ("  ", "is empty"),
        ("a\x00b.json.gz", "not a usable path"),
        ("x" * 5000, "not a usable path"),
    ],
)
def test_refusals(tree: Path, path: str, says: str) -> None:
    with pytest.raises(PathRefused, match=says) as err:
        Roots([tree]).resolve(path)
    assert "\n" not in str(err.value) and len(str(err.value)) < 500
    assert isinstance(err.value, BadInputError)


def test_a_folder_with_a_link_out_is_refused(tree: Path) -> None:
    with pytest.raises(PathRefused, match=r"out\.json\.gz is a symbolic link that leads outside"):
        Roots([tree]).resolve(".")  # the root itself holds out.json.gz, a trace file
    os.unlink(tree / "out.json.gz")
    # Entries that are never read (not trace files) may link anywhere.
    (tree / "python").symlink_to(tree.parent / "secret.json.gz")
    assert Roots([tree]).resolve(".") == tree.resolve()


def test_a_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="not a folder"):
        Roots([tmp_path / "nope"])


def test_store_reads_a_file_once_and_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(TRACE.read_bytes())
    store = Store()
    advice = store.advice(path)
    assert store.advice(path) is advice
    assert store.summary(path) is not None and store.trace(path) is advice.context.trace
    assert store.loads == 1
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert store.advice(path) is not advice
    assert store.loads == 2


def test_store_keeps_only_the_last_files(tmp_path: Path) -> None:
    paths = []
    for i in range(3):
        p = tmp_path / f"t{i}.json.gz"
        p.write_bytes(TRACE.read_bytes())
        paths.append(p)
    store = Store(keep=2)
    for p in paths:
        store.trace(p)
    store.trace(paths[2])
    store.trace(paths[1])
    assert store.loads == 3
    store.trace(paths[0])  # let go of when the third was opened
    assert store.loads == 4


SNAPSHOT = DATA / "snapshots" / "snap_train.pickle.gz"


def test_a_slow_load_blocks_neither_other_files_nor_shares_less_than_one_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The snapshot's load is held on an event; meanwhile a question about a trace read before
    # must be answered, and a second question about the snapshot must wait for the same load.
    import gpuviz.trace.allocator_snapshot as allocator_snapshot

    real_load = allocator_snapshot.load_snapshot
    started, release = threading.Event(), threading.Event()

    def held_load(path: Any, *args: Any, **kwargs: Any) -> Any:
        started.set()
        assert release.wait(60), "the test never let the load go"
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(allocator_snapshot, "load_snapshot", held_load)
    store = Store()
    trace = tmp_path / "t.json.gz"
    trace.write_bytes(TRACE.read_bytes())
    advice = store.advice(trace)
    snap = tmp_path / "s.pickle.gz"
    snap.write_bytes(SNAPSHOT.read_bytes())
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(store.snapshot(snap))) for _ in range(2)]
    threads[0].start()
    assert started.wait(60)
    threads[1].start()
    # While the snapshot is being read, the cached trace is answered (and not read again).
    assert store.advice(trace) is advice
    assert store.summary(trace) is not None
    assert threads[0].is_alive() and threads[1].is_alive() and not got
    release.set()
    for t in threads:
        t.join(60)
    assert len(got) == 2 and got[0] is got[1]  # one load for both questions
    assert store.loads == 2  # the trace once, the snapshot once


def test_a_failed_load_is_tried_again(tmp_path: Path) -> None:
    bad = tmp_path / "t.json.gz"
    bad.write_bytes(b"not gzip")
    store = Store()
    for _ in range(2):
        with pytest.raises(BadInputError):
            store.trace(bad)
    assert store.loads == 2
    bad.write_bytes(TRACE.read_bytes())
    assert store.trace(bad) is not None


def test_a_rewrite_with_the_same_size_and_mtime_is_seen(tmp_path: Path) -> None:
    # cp -p / touch -r: the same size and modification time, other content. The store's test
    # is the trace cache's (inode and ctime too), so the new content is read.
    import gzip

    text = gzip.decompress(TRACE.read_bytes())
    old, new = b'"name": "nvjet_sm90', b'"name": "NVJET_sm90'
    assert text.count(old) > 0
    path = tmp_path / "t.json"
    path.write_bytes(text)
    store = Store()
    names = set(store.trace(path).symbols)
    assert not any(n.startswith("NVJET_") for n in names)
    before = path.stat()
    path.write_bytes(text.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns  # what tells them apart
    assert any(n.startswith("NVJET_") for n in store.trace(path).symbols)
    assert store.loads == 2


def test_a_snapshot_is_bounded_in_size_and_time(tmp_path: Path) -> None:
    snap = tmp_path / "s.pickle.gz"
    snap.write_bytes(SNAPSHOT.read_bytes())
    size = snap.stat().st_size
    with pytest.raises(BadInputError, match=rf"{size:,} bytes, larger than the 1,000 bytes") as e:
        Store(snapshot_max_bytes=1000).snapshot(snap)
    assert "\n" not in str(e.value)
    with pytest.raises(BadInputError, match=r"reading it took more than 0 s, so it was stopped"):
        Store(snapshot_max_seconds=0).snapshot(snap)
    assert Store().snapshot(snap) is not None  # within the default bounds


def test_gpuviz_runs_linking_out_of_the_root_is_refused(tmp_path: Path) -> None:
    from gpuviz.agents.run_profile import run_profile

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "train.py").write_text("print('ran')\n")
    (root / "gpuviz-runs").symlink_to(outside)
    with pytest.raises(PathRefused, match=r"gpuviz-runs in .* symbolic link that leads outside"):
        run_profile(root / "train.py", [], [], root, 60)
    assert list(outside.iterdir()) == []  # nothing ran, nothing was written there
    # A link that stays inside the root is followed.
    (root / "gpuviz-runs").unlink()
    (root / "runs").mkdir()
    (root / "gpuviz-runs").symlink_to(root / "runs")
    assert folder_inside(root, "gpuviz-runs") == (root / "runs").resolve()


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_a_pickle_of_a_list_is_refused_from_its_first_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: int
) -> None:
    # A 10 MB pickle of a list is never a snapshot: refused without unpickling it (the loader
    # is made to fail if it is called), where reading it whole took seconds.
    import gzip
    import pickle

    import gpuviz.trace.allocator_snapshot as allocator_snapshot

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the snapshot was read")

    data = pickle.dumps([[i, str(i)] for i in range(400_000)], protocol=protocol)
    assert len(data) > 4_000_000
    plain, packed = tmp_path / "l.pickle", tmp_path / "l.pickle.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data, 1))
    real = allocator_snapshot.load_snapshot
    monkeypatch.setattr(allocator_snapshot, "load_snapshot", never)
    for path in (plain, packed):
        with pytest.raises(BadInputError, match=r"its pickle holds a list .* first bytes"):
            Store().snapshot(path)
    # A real snapshot and a hostile pickle still go to the loader (its message names the class).
    monkeypatch.setattr(allocator_snapshot, "load_snapshot", real)
    assert Store().snapshot(DATA / "snapshots" / "snap_oom.pickle") is not None
    evil = tmp_path / "evil.pickle"
    evil.write_bytes(b"cos\nsystem\n(S'true'\ntR.")
    with pytest.raises(BadInputError, match=r"would load os\.system"):
        Store().snapshot(evil)
