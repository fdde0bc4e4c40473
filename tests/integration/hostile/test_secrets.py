"""A planted secret appears nowhere: not in any file of the record, not on the host afterwards, not in the process list."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest

from reprokit.config.kit import load_kit_file
from reprokit.output.secrets import Redactor
from reprokit.records.run_dir import verify_record
from reprokit.run.kit_run import run_kit
from tests.integration.hostile.conftest import HOST, KIT, inventory_file, step
from tests.integration.remote.test_remote_docker import BASE
from tests.integration.remote.test_remote_docker import REASON as DOCKER_REASON

SECRET = "hf_PLANTED_0123456789abcdef"
# the workload writes the token into every kind of artifact; the big file puts it across the 1 MiB read boundary
PLANT = ('echo "{\\"token\\": \\"$HF_TOKEN\\"}" > other.json; echo "$HF_TOKEN" > server.log.1; echo "x $HF_TOKEN" > trace.out;'
         ' head -c 1048570 /dev/zero > big.bin; printf "%s" "$HF_TOKEN" >> big.bin;'
         ' ps -eo args | grep -c "$HF_TOKEN" > ps.txt; echo "token is $HF_TOKEN";'
         ' printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": [], "token": "%s"}\' "$HF_TOKEN"'
         ' > result.json; exit 0')


def secret_kit(tmp_path):
    kits = tmp_path / "kits"
    kits.mkdir()
    (kits / "smem-probe.yml").write_text(KIT.read_text() + "\nsecrets: [HF_TOKEN]\n")
    return kits / "smem-probe.yml"


def everything(path) -> bytes:
    return b"".join(p.read_bytes() for p in path.rglob("*") if p.is_file())


def test_a_planted_secret_is_masked_in_every_artifact_and_gone_from_the_host(rig, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    outcome, manifest, _ = rig.run(PLANT, kit=secret_kit(tmp_path))
    out = outcome.run_dir / "steps" / "probe"
    assert step(manifest)["status"] == "ok", rig.messages
    assert SECRET.encode() not in everything(outcome.run_dir)
    assert (out / "other.json").read_text() == '{"token": "***"}\n'
    assert (out / "server.log.1").read_text() == "***\n" and (out / "trace.out").read_text() == "x ***\n"
    assert (out / "big.bin").read_bytes()[-8:] == b"\0\0\0\0\0***"
    assert (out / "ps.txt").read_text() == "1\n"  # only the grep itself: no command line carries it
    assert verify_record(outcome.run_dir) == []
    assert SECRET.encode() not in everything(rig.work)  # the host keeps nothing of it


@pytest.mark.skipif(DOCKER_REASON is not None, reason=DOCKER_REASON or "")
def test_under_docker_the_secret_is_a_read_only_tmpfs_file_never_the_containers_environment(rig, tmp_path, monkeypatch):
    image = "reprokit-test/secret-probe:2"
    context = tmp_path / "image"
    context.mkdir()
    (context / "python3").write_text(
        '#!/bin/sh\ncase "$*" in *smem_probe*) cd /out; ls -A /out > seen.txt; cat "$HF_TOKEN_PATH" > token.txt;'
        ' env > env.txt; tr "\\0" "\\n" < /proc/1/environ > environ.txt; stat -c "%a %F" "$HF_TOKEN_PATH" > mode.txt;'
        ' stat -f -c %T "$(dirname "$HF_TOKEN_PATH")" > fs.txt; sleep 4; echo ok > result.json; exit 0;; esac\n'
        'exec /usr/bin/python3 "$@"\n')
    (context / "Dockerfile").write_text(f"FROM {BASE}\nCOPY python3 /usr/local/bin/python3\nRUN chmod 755 /usr/local/bin/python3\n")
    subprocess.run(["docker", "build", "-q", "-t", image, str(context)], check=True, capture_output=True)
    monkeypatch.setenv("HF_TOKEN", SECRET)
    inv_path = inventory_file(tmp_path / "inv.yml", rig.work, runtime="docker", container_ulimits={})
    from reprokit.hosts.axes import load_inventory  # noqa: PLC0415

    inv = load_inventory(inv_path)
    kit = secret_kit(tmp_path)
    box: dict = {}

    def run():
        box["outcome"] = run_kit(load_kit_file(kit), kit, inv.host(HOST), rig.runs, kit.parent, say=rig.messages.append,
                                 inventory=inv, options=rig.options(images={"workload": image}))

    thread = threading.Thread(target=run)
    thread.start()
    inspected = b""
    deadline = time.monotonic() + 60
    # A container listed by `docker ps` can be gone by the time `docker inspect` asks (a short one of the same image,
    # or the workload's own end): inspect then prints `[]`. Ask again until one running container has been seen.
    while thread.is_alive() and time.monotonic() < deadline and b'"Env"' not in inspected:
        ids = subprocess.run(["docker", "ps", "-q", "--filter", f"ancestor={image}"], capture_output=True).stdout.split()
        if ids:
            inspected = subprocess.run(["docker", "inspect", *[i.decode() for i in ids]], capture_output=True).stdout
        time.sleep(0.2)
    thread.join(120)
    out = box["outcome"].run_dir / "steps" / "probe"
    assert b'"Env"' in inspected and SECRET.encode() not in inspected  # docker inspect of the running container
    assert (out / "token.txt").read_text() == "***", rig.messages  # it reached the workload as a file, and was masked
    assert (out / "mode.txt").read_text() == "400 regular file\n" and (out / "fs.txt").read_text() == "tmpfs\n"
    assert "HF_TOKEN_PATH=/run/reprokit-secrets/HF_TOKEN" in (out / "env.txt").read_text().splitlines()
    assert "***" not in (out / "env.txt").read_text() + (out / "environ.txt").read_text()  # never in its environment
    assert (out / "seen.txt").read_text().split() == ["exit_code", "params.json", "pid", "run.sh", "seen.txt", "step.log"]
    assert SECRET.encode() not in everything(box["outcome"].run_dir) + everything(rig.work)


def test_redaction_streams_and_catches_a_secret_split_across_reads(tmp_path):
    path = tmp_path / "log"
    data = b"a" * 1000 + SECRET.encode() + b"b" * 7 + SECRET.encode()[:-1]
    for chunk_bytes in (1, 3, 16, 1000, 1003, 1 << 20):
        path.write_bytes(data)
        assert Redactor([SECRET]).file(path, chunk_bytes=chunk_bytes) is True
        assert path.read_bytes() == b"a" * 1000 + b"***" + b"b" * 7 + SECRET.encode()[:-1]


ODD_SECRET = "hf_Planted/0123+456789=abcdefXYZ"  # characters that URL-encoding and base64 both change
VARIANTS = (  # the workload prints its token in every common encoding, to step.log and to a file
    'for pre in "" a ab; do printf "%s%s" "$pre" "$HF_TOKEN" | base64 -w0; echo; done;'
    ' (head -c 70 /dev/zero | tr "\\0" x; printf %s "$HF_TOKEN") | base64;'  # wrapped at 76: split across lines
    ' printf %s "$HF_TOKEN" | od -An -tx1 | tr -d " \\n"; echo;'
    ' printf %s "$HF_TOKEN" | od -An -tx1 | tr -d " \\n" | tr a-f A-F; echo;'
    ' printf %s "$HF_TOKEN" | sed "s|/|%2F|g; s|+|%2B|g; s|=|%3D|g"; echo;'
    ' printf %s "$HF_TOKEN" | tr a-z A-Z; echo; printf %s "$HF_TOKEN" | tr A-Z a-z; echo;'
    ' printf "%s\\n%s\\n" "$(printf %s "$HF_TOKEN" | cut -c1-10)" "$(printf %s "$HF_TOKEN" | cut -c11-)";'
    ' printf %s "$HF_TOKEN" | base64 -w0 | tr "+/" "-_" > urlsafe.txt;'
    ' printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json; exit 0'
)


def encodings(value: str) -> dict[str, bytes]:
    import base64
    import urllib.parse
    raw = value.encode()
    found = {f"base64+{n}": base64.b64encode(b"ab"[:n] + raw)[4 if n else 0:-4] for n in range(3)}
    found.update(hex=raw.hex().encode(), HEX=raw.hex().upper().encode(), upper=value.upper().encode(),
                 lower=value.lower().encode(), url=urllib.parse.quote(value, safe="").encode(),
                 urlsafe=base64.urlsafe_b64encode(raw)[:-4])
    return found


def test_every_common_encoding_of_a_secret_is_masked_in_step_log_and_files(rig, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", ODD_SECRET)
    outcome, manifest, _ = rig.run(VARIANTS, kit=secret_kit(tmp_path))
    assert step(manifest)["status"] == "ok", rig.messages
    log = (outcome.run_dir / "steps" / "probe" / "step.log").read_bytes()
    record = everything(outcome.run_dir)
    leaked = {name: needle for name, needle in encodings(ODD_SECRET).items() if needle in record}
    assert leaked == {}
    assert b"\n".join(line for line in log.splitlines() if b"***" not in line) == b"eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4"  # noqa: E501
    assert log.count(b"***") == 10  # 3 alignments, wrapped base64, hex, HEX, URL-encoded, upper, lower, split
    assert (outcome.run_dir / "steps" / "probe" / "urlsafe.txt").read_bytes().startswith(b"***")
    assert verify_record(outcome.run_dir) == []


GZIPPED = ('printf "token %s\\n" "$HF_TOKEN" | gzip > token.log.gz; (printf a | gzip; printf "x%s" "$HF_TOKEN" | gzip)'
           ' > members.bin; printf "%s" "$HF_TOKEN" > "n"; gzip -N -c n > named; rm n;'
           ' printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json; exit 0')


def test_a_secret_inside_gzip_is_masked_in_the_decompressed_text(rig, tmp_path, monkeypatch):
    import gzip
    monkeypatch.setenv("HF_TOKEN", ODD_SECRET)
    outcome, manifest, _ = rig.run(GZIPPED, kit=secret_kit(tmp_path))
    out = outcome.run_dir / "steps" / "probe"
    assert step(manifest)["status"] == "ok", rig.messages
    assert gzip.decompress((out / "token.log.gz").read_bytes()) == b"token ***\n"
    assert gzip.decompress((out / "members.bin").read_bytes()) == b"ax***"  # every member, whatever the name
    assert gzip.decompress((out / "named").read_bytes()) == b"***"
    assert ODD_SECRET.encode() not in (out / "named").read_bytes()  # nor the gzip header's name field
    assert verify_record(outcome.run_dir) == []


def test_a_cut_gzip_is_masked_as_far_as_it_decompresses(tmp_path):
    import gzip
    path = tmp_path / "cut.gz"
    noise = bytes(range(256)) * 40  # not compressible to nothing: the cut lands after the secret
    whole = gzip.compress(b"a" * 100 + SECRET.encode() + noise, mtime=0)
    path.write_bytes(whole[:-40])  # the trailer and some data gone: a reader gets the secret, then an error
    assert Redactor([SECRET]).file(path, chunk_bytes=64) is True
    with gzip.open(path) as fh:
        text = fh.read()
    assert text.startswith(b"a" * 100 + b"***\x00\x01") and SECRET.encode() not in text
    clean = tmp_path / "clean.gz"
    clean.write_bytes(gzip.compress(b"nothing here", mtime=0))
    before = clean.read_bytes()
    assert Redactor([SECRET]).file(clean) is False and clean.read_bytes() == before
