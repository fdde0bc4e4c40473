"""Count the bytes reprokit's own code feeds to sha256 (the SSH library's hashing is not the record's)."""

from __future__ import annotations

import hashlib
import sys

import pytest


class HashCount:
    def __init__(self) -> None:
        self.bytes = 0
        self.by_module: dict[str, int] = {}
        real = hashlib.sha256
        count = self

        class Counting:
            def __init__(self, data: bytes = b"", **kwargs):
                self._digest = real(**kwargs)
                self._module = sys._getframe(1).f_globals.get("__name__", "")
                if data:
                    self.update(data)

            def update(self, data) -> None:
                if self._module.startswith("reprokit"):
                    count.bytes += len(data)
                    count.by_module[self._module] = count.by_module.get(self._module, 0) + len(data)
                self._digest.update(data)

            def __getattr__(self, name: str):
                return getattr(self._digest, name)

        self.factory = Counting


@pytest.fixture
def hashed(monkeypatch) -> HashCount:
    count = HashCount()
    monkeypatch.setattr(hashlib, "sha256", count.factory)
    return count
