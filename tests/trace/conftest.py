"""The importer's and the model's tests read the files themselves, not the import cache.

Several compare two imports of one file under different settings (chunk sizes, child
processes); a cache hit would make them compare the cache with itself. The cache's own tests
(``test_cache*.py``) turn it back on with their own fixture.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _import_without_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
