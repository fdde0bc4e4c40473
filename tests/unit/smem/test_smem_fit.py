"""Static plus dynamic shared memory against a block's limit, and the compiler's static limit per target suffix."""

import pytest

from reprokit.workloads.facts.smem_fit import compile_targets, fit, static_smem_limit_bytes

SM120_OPTIN_BYTES = 101376


def test_static_bytes_count_against_the_limit_as_the_driver_counts_them():
    # warp 1701: 101120 B of dynamic shared memory were refused against 101376 B; with no static bytes it would fit
    assert fit(101120, 0, SM120_OPTIN_BYTES).fits is True
    refused = fit(101120, 512, SM120_OPTIN_BYTES)
    assert (refused.fits, refused.total_bytes, refused.over_bytes) == (False, 101632, 256)
    assert fit(101120, 256, SM120_OPTIN_BYTES).fits is True  # exactly at the limit
    with pytest.raises(ValueError, match="cannot be negative"):
        fit(-1, 0, SM120_OPTIN_BYTES)


@pytest.mark.parametrize("target, limit", [("sm_120", 49152), ("sm_120f", 49152), ("sm_121f", 49152),
                                           ("sm_120a", 101376), ("sm_121a", 101376), ("compute_120a", 101376),
                                           ("sm_90a", 49152), ("sm_100a", 49152)])
def test_the_static_limit_depends_on_the_target_suffix(target, limit):
    assert static_smem_limit_bytes(target) == limit


def test_the_targets_are_read_from_gencode_flags():
    assert compile_targets(["-O0", "-gencode=arch=compute_120a,code=sm_120a"]) == ["sm_120a"]
    assert compile_targets(["-gencode=arch=compute_90a,code=[sm_90a,compute_90a]"]) == ["sm_90a"]
    with pytest.raises(ValueError, match="not a compile target"):
        static_smem_limit_bytes("sm120")
