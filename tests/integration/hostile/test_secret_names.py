"""A secret in a file name is data from the host like one in a file's bytes (issue #40).

The workload names files and links after its token, in every form the content masker knows; no form may reach
the manifest, its ``not_pulled`` list, the reports or the console, and each such entry is listed as withheld.
"""

from __future__ import annotations

import json
import shlex

from reprokit.hosts.pull_listing import SECRET_NAME_REASON
from reprokit.output.secrets import Redactor, mask_local_names, variants
from reprokit.records.run_dir import verify_record
from tests.integration.hostile.conftest import RESULT_OK, step
from tests.integration.hostile.test_secrets import everything, secret_kit

SECRET = "hf_NameLeak0123456789abcdef"


def every_form(value: str) -> list[str]:
    """Each needle the masker searches for (its case variants, hex, URL-encoded, base64 at three alignments)."""
    folded, exact = variants(value)
    return sorted({n.decode() for n in folded | exact} | {value.upper(), value.lower()})


def plant_names() -> str:
    """sh that makes one file per form (a form with ``/`` becomes a directory path), a link and a directory."""
    lines = []
    for number, form in enumerate(every_form(SECRET)):
        name = shlex.quote(f"n{number}-{form}.txt")
        lines.append(f'mkdir -p "$(dirname {name})"; echo data > {name}')
    lines.append('ln -s result.json "link-$HF_TOKEN"; mkdir "dir-$HF_TOKEN"; echo x > "dir-$HF_TOKEN/inner.txt"')
    return "; ".join(lines) + "; " + RESULT_OK


def test_a_secret_in_a_file_or_link_name_reaches_no_record_report_or_console(rig, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    outcome, manifest, _ = rig.run(plant_names(), kit=secret_kit(tmp_path))
    probe = step(manifest)
    assert probe["status"] == "ok", rig.messages
    forms = [f.encode() for f in every_form(SECRET)]
    record = everything(outcome.run_dir) + json.dumps(manifest).encode() + "\n".join(rig.messages).encode()
    assert [f for f in forms if f in record] == []
    withheld = [e for e in probe["not_pulled"] if e["reason"] == SECRET_NAME_REASON]
    assert len(withheld) == len(forms) + 1  # each form's file and the directory's file; the link is not a file
    link = [e for e in probe["not_pulled"] if e["path"] == "link-***"]
    assert len(link) == 1 and link[0]["reason"].startswith("not a regular file")
    assert all("***" in e["path"] for e in probe["not_pulled"])
    assert (outcome.run_dir / "report.md").is_file() and (outcome.run_dir / "report.html").is_file()
    assert sum("not pulled from" in m and "***" in m for m in rig.messages) == len(forms) + 2
    assert verify_record(outcome.run_dir) == []


def test_a_local_step_s_names_are_masked_in_place(tmp_path):
    (tmp_path / f"dir-{SECRET}").mkdir()
    (tmp_path / f"dir-{SECRET}" / f"a-{SECRET.upper()}").write_text("x")
    (tmp_path / f"b-{SECRET.encode().hex()}").write_text("y")
    (tmp_path / "b-***").write_text("taken")
    (tmp_path / f"link-{SECRET}").symlink_to("b-***")
    assert mask_local_names(tmp_path, Redactor([SECRET])) == 4
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert names == ["b-***", "b-***.1", "dir-***", "dir-***/a-***", "link-***"]
    assert (tmp_path / "b-***.1").read_text() == "y" and (tmp_path / "link-***").is_symlink()
    assert mask_local_names(tmp_path, Redactor([])) == 0
