import pytest

from reprokit.config.kit import Kit
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import StepEntry, Verdict, Word
from reprokit.report.judge import PathMissing, judge, resolve

PASS, FAIL, INCONCLUSIVE = Word.PASS, Word.FAIL, Word.INCONCLUSIVE

H200 = Fingerprint.from_json({"devices": [{"index": 0, "name": "NVIDIA H200", "gpu_arch": "sm90"}], "gpu_reason": None}, "test")
RTX = Fingerprint.from_json({"devices": [{"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "gpu_arch": "sm120"}
                                         for i in range(8)]}, "test")
NO_GPU = Fingerprint.from_json({"devices": [], "gpu_reason": "no NVIDIA driver on this host (libcuda.so.1 not found)"}, "test")


def make_kit(*expectations):
    return Kit.model_validate({
        "kit": "demo", "description": "d", "pins": {"torch": "2.9.1", "cuda": "12.9.1"},
        "steps": [{"name": "probe", "uses": "smem-probe"}], "expect": list(expectations),
    })


def probe_step(optin=(232448,), ok=(True,), status="ok"):
    devices = [{"driver": {"max_shared_memory_per_block_optin_bytes": o}, "launch_at_optin_limit": {"ok": k}}
               for o, k in zip(optin, ok)]
    return {"probe": StepEntry("probe", "smem-probe", status, result={"status": status, "devices": devices, "tiles": ["a", "b"]})}


def test_resolve_paths():
    data = {"a": [{"b": 1}, {"b": 2}], "c": {"d": [5, 6]}}
    assert resolve("a[*].b", data) == ([1, 2], True)
    assert resolve("c.d[1]", data) == ([6], False)
    assert resolve("c", data) == ([{"d": [5, 6]}], False)
    with pytest.raises(PathMissing):
        resolve("a[*].z", data)
    with pytest.raises(PathMissing):
        resolve("c.d[7]", data)


def test_pass_fail_and_every_item_counts():
    kit = make_kit({"name": "ok", "step": "probe", "path": "devices[*].launch_at_optin_limit.ok", "equals": True})
    assert judge(kit, probe_step(optin=(1, 1), ok=(True, True)), H200).verdict == PASS
    result = judge(kit, probe_step(optin=(1, 1), ok=(True, False)), H200)
    assert result.verdict == FAIL
    assert result.expectations[0].observed == [True, False]
    assert result.summary == "1 of 1 expectations did not hold"


def test_a_null_value_is_inconclusive_unless_another_item_fails():
    """A workload writes null where it could not tell (the probe on a GPU host whose Python has no torch)."""
    kit = make_kit({"name": "ok", "step": "probe", "path": "devices[*].launch_at_optin_limit.ok", "equals": True})
    unknown = judge(kit, probe_step(optin=(1, 1), ok=(True, None)), H200)
    assert (unknown.verdict, unknown.expectations[0].observed, unknown.expectations[0].reason) == (
        INCONCLUSIVE, [True, None], "step 'probe' could not tell devices[*].launch_at_optin_limit.ok here (null)")
    assert judge(kit, probe_step(optin=(1, 1), ok=(False, None)), H200).verdict == FAIL


def test_equals_by_arch():
    kit = make_kit({"name": "optin", "step": "probe", "path": "devices[*].driver.max_shared_memory_per_block_optin_bytes",
                    "equals_by_arch": {"sm90": 232448, "sm120": 101376}})
    assert judge(kit, probe_step(optin=(232448,)), H200).verdict == PASS
    failed = judge(kit, probe_step(optin=(232448,)), RTX).expectations[0]
    assert (failed.status, failed.reason) == (FAIL, "observed 232448")
    odd = judge(kit, probe_step(), Fingerprint.from_json({"devices": [{"name": "A100", "gpu_arch": "sm80"}]}, "test")).expectations[0]
    assert (odd.status, odd.reason) == (INCONCLUSIVE, "applies to sm90/sm120; this host has sm80 (A100)")


def test_when_arch_and_no_gpu_are_inconclusive_with_reason():
    kit = make_kit({"name": "sm120", "step": "probe", "when": {"gpu_arch": ["sm120"]},
                    "path": "devices[*].driver.max_shared_memory_per_block_optin_bytes", "equals": 101376})
    j = judge(kit, probe_step(), H200)
    assert j.verdict == INCONCLUSIVE
    assert j.expectations[0].reason == "applies to sm120; this host has sm90 (NVIDIA H200)"
    j = judge(kit, probe_step(), NO_GPU)
    assert j.expectations[0].reason == "applies to sm120; this host has no GPU (no NVIDIA driver on this host (libcuda.so.1 not found))"
    assert judge(kit, probe_step(optin=(101376,) * 8, ok=(True,) * 8), RTX).verdict == PASS


def test_step_without_result_is_inconclusive_and_missing_path_fails():
    kit = make_kit({"name": "x", "step": "probe", "path": "tiles", "contains_all": ["a", "c"]})
    j = judge(kit, {"probe": StepEntry("probe", "smem-probe", "not_run", reason="not run: needs a CUDA GPU")}, NO_GPU)
    assert (j.verdict, j.expectations[0].reason) == (INCONCLUSIVE, "step 'probe' has no result: not run: needs a CUDA GPU")
    nodev = {"probe": StepEntry("probe", "smem-probe", "no_device",
                                result={"status": "no_device", "error": "the NVIDIA driver sees no CUDA device"})}
    assert judge(kit, nodev, NO_GPU).expectations[0].reason == "step 'probe' reported no_device: the NVIDIA driver sees no CUDA device"
    j = judge(kit, probe_step(), H200)
    assert (j.verdict, j.expectations[0].reason) == (FAIL, "missing c")
    kit = make_kit({"name": "x", "step": "probe", "path": "nothing.here", "equals": 1})
    assert judge(kit, probe_step(), H200).expectations[0].reason == "the result of 'probe' has no 'nothing' on the path nothing.here"


def test_operators():
    step = probe_step(optin=(100, 200), ok=(True, True))
    for spec, verdict in [
        ({"at_least": 100}, PASS), ({"at_least": 150}, FAIL), ({"at_most": 200}, PASS), ({"at_most": 150}, FAIL),
        ({"one_of": [100, 200]}, PASS), ({"one_of": [100]}, FAIL),
    ]:
        kit = make_kit({"name": "n", "step": "probe", "path": "devices[*].driver.max_shared_memory_per_block_optin_bytes", **spec})
        assert judge(kit, step, H200).verdict == verdict, spec
    kit = make_kit({"name": "n", "step": "probe", "path": "status", "matches": "^o."})
    assert judge(kit, step, H200).verdict == PASS


def test_no_expectations_is_inconclusive():
    assert judge(make_kit(), {}, H200) == Verdict(INCONCLUSIVE, "the kit declares no expectations", [])
