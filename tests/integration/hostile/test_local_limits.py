"""A host path this machine cannot hold is one entry not pulled, never a pull-back that stops (issue #40).

The host makes a file about 4 010 bytes deep in the step directory (within the listing's 4 096-byte bound); below
this test's run directory it passes Linux's PATH_MAX. ENAMETOOLONG was taken for a dropped link and retried, so
``result.json`` never came back and every ``collect`` failed the same way.
"""

from __future__ import annotations

from reprokit.hosts.pull_listing import INTERNAL_NAME_REASON
from reprokit.records.run_dir import verify_record
from tests.integration.hostile.conftest import RESULT_OK, step

DEPTH, NAME_CHARS = 19, 210
DEEP = ('python3 -c "import os\nfor _ in range(19): os.mkdir(\'0\' * 210); os.chdir(\'0\' * 210)\nopen(\'f\', \'w\').write(\'deep\')";'
        ' ' + RESULT_OK)


def test_a_path_too_long_for_this_machine_is_not_pulled_and_the_rest_comes_back(rig, tmp_path):
    outcome, manifest, _ = rig.run(DEEP)
    probe = step(manifest)
    assert (manifest["status"], probe["status"]) == ("complete", "ok"), rig.messages
    rel = "/".join(["0" * NAME_CHARS] * DEPTH + ["f"])
    (entry,) = probe["not_pulled"]
    here = len(str((outcome.run_dir / "steps" / "probe").resolve() / rel).encode())
    assert entry == {"path": rel, "reason": f"the path is too long for this machine ({here} bytes here, a name of 210;"
                     " this file system takes 4095 and 255): copy it by hand, or run again with a shorter --runs-dir"}
    assert (outcome.run_dir / "steps" / "probe" / "result.json").is_file()
    assert verify_record(outcome.run_dir) == []
    assert len(rig.remote_runs()) == 1  # the host keeps its copy for the entry that did not come back


def test_host_files_named_like_reprokit_s_own_temporaries_are_not_pulled(rig):
    """Issue #40: `.partial-*`, `.*.tmp`, `.*.redacting` from the host were pulled but left out of the manifest, so
    check-record passed over them."""
    body = ('mkdir .partial-x; echo a > .partial-x/f; echo b > .result.json.tmp; echo c > .step.log.1a2b.redacting;'
            ' echo d > plain.tmp; ' + RESULT_OK)
    outcome, manifest, _ = rig.run(body)
    probe = step(manifest)
    assert probe["status"] == "ok", rig.messages
    assert sorted(e["path"] for e in probe["not_pulled"]) == [".partial-x/f", ".result.json.tmp",
                                                              ".step.log.1a2b.redacting"]
    assert {e["reason"] for e in probe["not_pulled"]} == {INTERNAL_NAME_REASON}
    assert "steps/probe/plain.tmp" in manifest["artifacts"]  # not a dot-file: an artifact like any other
    out = outcome.run_dir / "steps" / "probe"
    assert sorted(p.name for p in out.iterdir()) == ["params.json", "plain.tmp", "result.json", "step.log"]
    assert verify_record(outcome.run_dir) == []
