"""The agents' server's path check (:class:`Roots`) and its cache of opened files (:class:`Store`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuviz.agents.confine import PathRefused, Roots
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
