"""Test double of sglang (see tests/doubles/sglang-server/README.md)."""

__version__ = "0.5.9-test-double"
