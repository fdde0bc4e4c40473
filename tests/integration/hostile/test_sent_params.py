"""The host overwrites the ``params.json`` the control sent: the record keeps the sent one (its bytes, its hash in
the manifest); the host's copy is kept beside it as ``params.host.json`` and the overwrite is said, in the run and
through ``invoke collect`` (before: the record held the host's version as if it had been sent)."""

from __future__ import annotations

import json

from reprokit.records.run_dir import load_manifest, verify_record
from reprokit.run.collect import collect_run
from tests.integration.hostile.conftest import KIT, RESULT_OK, Rig

OVERWRITE = "printf '{\"evil\": 1}\\n' > params.json; "


def test_the_record_keeps_the_params_it_sent_and_names_the_overwrite(tmp_path):
    rig = Rig(tmp_path, "sent-params")
    outcome, manifest, _ = rig.run(OVERWRITE + RESULT_OK)
    probe = outcome.run_dir / "steps" / "probe"
    sent = json.loads((probe / "params.json").read_text())
    assert sent != {"evil": 1} and "evil" not in sent
    assert (probe / "params.host.json").read_bytes() == b'{"evil": 1}\n'
    assert manifest["status"] == "complete" and verify_record(outcome.run_dir) == []
    assert "steps/probe/params.host.json" in manifest["artifacts"]
    said = [m.strip() for m in rig.messages if "params.json" in m]
    assert said == ["the host changed the params.json of step 'probe' that this machine sent; the record keeps the"
                    " sent one, the host's is kept as params.host.json"]


def test_collect_keeps_the_sent_params_too(tmp_path):
    rig = Rig(tmp_path, "sent-params-collect")
    body = OVERWRITE + "head -c 100000 /dev/urandom > data.bin; " + RESULT_OK
    outcome, manifest, inv = rig.run(body, options=rig.options(max_pull_bytes=50_000))
    assert manifest["status"] == "incomplete"
    rig.messages.clear()
    collect_run(outcome.run_dir, inv, rig.options(), KIT.parent, say=rig.messages.append, wait_s=60)
    probe = outcome.run_dir / "steps" / "probe"
    assert "evil" not in json.loads((probe / "params.json").read_text())
    assert (probe / "params.host.json").read_bytes() == b'{"evil": 1}\n'
    assert load_manifest(outcome.run_dir).status == "complete" and verify_record(outcome.run_dir) == []
    assert [m.strip() for m in rig.messages if "params.json" in m] == [
        "the host changed the params.json of step 'probe' that this machine sent; the record keeps the sent one, the"
        " host's is kept as params.host.json"]
