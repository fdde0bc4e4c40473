"""Locks that lost their owner, other machines' locks, silent links, and every malformed input: one line, one exit code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprokit.commands.run import parse_images
from reprokit.config.kit import load_kit_file
from reprokit.config.yamlfile import MAX_DEPTH, MAX_NODES, load_yaml
from reprokit.errors import ConfigError, ExitCode, HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import executor_for
from reprokit.hosts.host_lock import OWNERLESS_STALE_S, HostLock, break_lock
from reprokit.hosts.known_hosts import check_known_hosts
from reprokit.hosts.ssh import connection_for
from reprokit.output.secrets import collect_secrets
from reprokit.records.run_dir import load_manifest, new_run_id
from reprokit.run.kit_run import run_kit
from tests.conftest import REPO, run_invoke
from tests.integration.hostile.conftest import HOST, KIT, RESULT_OK, inventory_file
from tests.integration.remote.conftest import STATE, alive

KEY = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"  # a well-formed ssh-ed25519 blob


def lock_fs(rig):
    inv = rig.inventory(RESULT_OK)
    executor = executor_for(inv.host(HOST), inv, Path("runs"), rig.options(), say=rig.messages.append)
    executor.connect()
    return inv, executor, HostLock(executor.transport, HOST, f"{executor.workdir}/lock", run_id="")


def test_a_lock_without_owner_goes_stale_and_unlock_clears_it(rig):
    inv, executor, lock = lock_fs(rig)
    (rig.work / "lock").mkdir()
    subprocess.run(["chown", "rkuser:rkuser", str(rig.work / "lock")], check=True)
    with pytest.raises(HostError) as young:
        break_lock(lock, rig.messages.append)
    assert str(young.value).startswith(f"host '{HOST}' is being locked right now (")
    old = time.time() - OWNERLESS_STALE_S - 5
    os.utime(rig.work / "lock", (old, old))
    with pytest.raises(HostError) as stale:
        run_kit(load_kit_file(KIT), KIT, inv.host(HOST), rig.runs, KIT.parent, say=rig.messages.append, inventory=inv,
                options=rig.options())
    assert str(stale.value) == (f"host '{HOST}' has a STALE lock: {rig.work}/lock has had no owner file for 60 s or more"
                                f" (a run crashed while taking it); remove it with `invoke unlock --host {HOST}`")
    break_lock(lock, rig.messages.append)
    executor.close_connection()
    assert rig.messages[-1] == f"removed the lock without an owner on host '{HOST}'"
    assert not (rig.work / "lock").exists()


def test_an_ownerless_lock_dated_in_the_future_goes_stale(rig):
    """The host's clock stepped back: the lock's age is negative, and before it never reached the stale age."""
    inv, executor, lock = lock_fs(rig)
    (rig.work / "lock").mkdir()
    subprocess.run(["chown", "rkuser:rkuser", str(rig.work / "lock")], check=True)
    future = time.time() + 3600
    os.utime(rig.work / "lock", (future, future))
    with pytest.raises(HostError) as stale:
        run_kit(load_kit_file(KIT), KIT, inv.host(HOST), rig.runs, KIT.parent, say=rig.messages.append, inventory=inv,
                options=rig.options())
    assert str(stale.value) == (f"host '{HOST}' has a STALE lock: {rig.work}/lock has had no owner file for 60 s or more"
                                f" (a run crashed while taking it); remove it with `invoke unlock --host {HOST}`")
    break_lock(lock, rig.messages.append)
    executor.close_connection()
    assert not (rig.work / "lock").exists()


def test_unlock_refuses_another_machines_live_lock_unless_forced(rig):
    _, executor, lock = lock_fs(rig)
    (rig.work / "lock").mkdir()
    (rig.work / "lock" / "owner.json").write_text(json.dumps(
        {"run_id": "R-other", "control_host": "ci-runner-7", "pid": 4242, "since": "2026-12-01T09:00:00Z"}))
    subprocess.run(["chown", "-R", "rkuser:rkuser", str(rig.work / "lock")], check=True)
    with pytest.raises(HostError) as refused:
        break_lock(lock, rig.messages.append)
    assert str(refused.value) == (f"host '{HOST}' is locked by run R-other of another control machine (ci-runner-7,"
                                  " pid 4242, since 2026-12-01T09:00:00Z); whether it still runs cannot be seen from"
                                  " here: check there, then `invoke unlock --force`")
    assert (rig.work / "lock" / "owner.json").exists()
    break_lock(lock, rig.messages.append, force=True)
    executor.close_connection()
    assert not (rig.work / "lock").exists()


def test_the_openssh_bulk_path_gives_up_on_a_silent_link(rig):
    _, executor, _ = lock_fs(rig)
    executor.transport.io_timeout_s = 1.0
    started = time.monotonic()
    with pytest.raises(TimeoutError) as silent:
        list(executor.pullback._openssh_source(executor.transport.openssh_argv(), "sleep 30", {}))
    elapsed_s = time.monotonic() - started
    executor.close_connection()
    assert str(silent.value) == f"no data from host '{HOST}' for 1 s"
    assert elapsed_s < 20  # not the 120 s the old bulk path sat; the exact figure is the timeout's, not asserted


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_group_run_honours_ctrl_c_and_sigterm(rig, tmp_path, signum):
    python = rig.inventory(f'echo $$ > {rig.work}/hang.pid; echo started > {rig.work}/started; sleep 60; '
                           + RESULT_OK).host(HOST).python
    inv = inventory_file(tmp_path / "inv.yml", rig.work, ansible_python_interpreter=python)
    inv.write_text(inv.read_text() + f"  children:\n    rack:\n      hosts:\n        {HOST}:\n")
    proc = subprocess.Popen([sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", "smem-probe", "--group",
                             "rack", "--inventory", str(inv), "--known-hosts", str(rig.known), "--runs-dir", str(rig.runs),
                             "--json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (rig.work / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    (row,) = json.loads(out)
    assert (row["host"], row["verdict"], row["exit_code"]) == (HOST, "INTERRUPTED", 130)
    assert load_manifest(row["run_dir"]).to_json()["status"] == "interrupted"
    assert not alive(int((rig.work / "hang.pid").read_text()))  # the workload was ended on the host
    assert not (rig.work / "lock").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
     f"F:5: more than {MAX_NODES} values once aliases are expanded; write the values out instead of repeating aliases (&/*)"),
    ("a: &a [*a]\n", f"F:1: nested more than {MAX_DEPTH} levels deep (or an alias refers to itself); flatten it"),
    ("[" * 3000 + "]" * 3000 + "\n", f"F: nested too deeply to read; flatten it (at most {MAX_DEPTH} levels)"),
])
def test_yaml_bombs_and_deep_nesting_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "inventory.yml"
    path.write_text(text)
    with pytest.raises(ConfigError) as bad:
        load_yaml(path)
    assert str(bad.value) == message.replace("F", str(path), 1)
    assert bad.value.exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize(("content", "message"), [
    (None, "F: the known_hosts file is not a regular file (a directory or FIFO?); give a file"),
    (b"\x00\xff\xfe binary", "F: the known_hosts file is not text (byte 1); give an OpenSSH known_hosts file"),
    (b"host ssh-ed25519 not!base64\n", "F:1: the key is not valid base64; copy the line again (ssh-keyscan)"),
    (f"host ssh-rsa {KEY}\n".encode(), "F:1: the key data is not a ssh-rsa key; copy the line again (ssh-keyscan)"),
    (f"@cert-authority *.example ssh-ed25519 {KEY}\n".encode(),
     "F:1: '@cert-authority' lines are not supported (paramiko would ignore them, and a revoked key would be trusted);"
     " list the host keys themselves and remove this line"),
    (f"# ok\n10.0.0.1 ssh-ed25519 {KEY}\n@revoked * ssh-ed25519 {KEY}\n".encode(),
     "F:3: '@revoked' lines are not supported (paramiko would ignore them, and a revoked key would be trusted);"
     " list the host keys themselves and remove this line"),
])
def test_malformed_known_hosts_is_a_one_line_error(tmp_path, content, message):
    path = tmp_path / "known_hosts"
    path.mkdir() if content is None else path.write_bytes(content)
    with pytest.raises(ConfigError) as bad:
        check_known_hosts(path)
    assert str(bad.value) == message.replace("F", str(path), 1)


def test_fifos_where_files_are_expected_are_refused_at_once(tmp_path):
    for name in ("known_hosts", "inventory.yml"):
        os.mkfifo(tmp_path / name)
    with pytest.raises(ConfigError) as known:
        check_known_hosts(tmp_path / "known_hosts")
    assert str(known.value).endswith("the known_hosts file is not a regular file (a directory or FIFO?); give a file")
    with pytest.raises(ConfigError) as inventory:
        load_yaml(tmp_path / "inventory.yml")
    assert str(inventory.value) == f"{tmp_path / 'inventory.yml'}: not a regular file; give a YAML file"


def test_flags_secrets_manifests_and_names_that_cannot_be_used(tmp_path):
    with pytest.raises(ConfigError) as image:
        parse_images(["noequals"])
    assert str(image.value).startswith("--image 'noequals': write NAME=REFERENCE")
    with pytest.raises(ConfigError) as secret:
        collect_secrets(["HF_TOKEN"], {"HF_TOKEN": "hf_abc\nrm -rf /"})
    assert str(secret.value) == ("secret HF_TOKEN contains a newline or NUL; set it to the single-line value (e.g. the"
                                 " token itself) and run again")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("[1, 2]")
    with pytest.raises(ConfigError) as manifest:
        load_manifest(tmp_path / "run").to_json()
    assert str(manifest.value) == (f"{tmp_path / 'run' / 'manifest.json'}: not a run manifest (expected a JSON object"
                                   " with a 'status'); the record is damaged")
    with pytest.raises(ConfigError) as host:
        new_run_id("smem-probe", "../../etc")
    assert str(host.value).startswith("host name '../../etc' cannot name a run directory;")


def test_a_proxy_jump_loop_is_bad_input(tmp_path):
    path = tmp_path / "inv.yml"
    path.write_text("all:\n  hosts:\n    a:\n      ansible_host: 10.0.0.1\n      proxy_jump: b\n"
                    "    b:\n      ansible_host: 10.0.0.2\n      proxy_jump: a\n")
    inv = load_inventory(path)
    with pytest.raises(ConfigError) as loop:
        connection_for(inv.host("a"), inv, tmp_path / "known_hosts")
    assert loop.value.exit_code == ExitCode.BAD_INPUT
    assert str(loop.value).endswith("proxy_jump loop through a -> b -> a; fix proxy_jump")


def test_a_missing_inventory_file_is_an_error(tmp_path):
    proc = run_invoke("hosts", "--inventory", str(tmp_path / "nope.yml"))
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    assert proc.stderr.strip() == f"error: {tmp_path / 'nope.yml'}: inventory not found (--inventory); give an existing inventory file"


def test_a_host_name_that_would_leave_runs_is_refused_at_its_line(tmp_path):
    path = tmp_path / "inv.yml"
    path.write_text('all:\n  hosts:\n    ok-host:\n    "gpu/../../x":\n      ansible_host: 10.0.0.1\n')
    with pytest.raises(ConfigError) as bad:
        load_inventory(path)
    assert str(bad.value) == (f"{path}:4: host name 'gpu/../../x' cannot name a run directory; use letters, digits,"
                              " '.', '_' and '-' (no '/', spaces or '..'), starting with a letter or digit")


@pytest.mark.parametrize("kind, message", [
    ("/dev/zero", "not a regular file (a directory, FIFO or device?); give a private key file"),
    ("fifo", "not a regular file (a directory, FIFO or device?); give a private key file"),
    ("directory", "not a regular file (a directory, FIFO or device?); give a private key file"),
    ("binary", "not a private key (binary data at byte 1); give an OpenSSH or PEM private key file"),
    ("huge", "65536 bytes is too big for a private key (at most 64 KiB); give a private key file"),
])
def test_a_key_file_that_is_not_a_small_text_file_is_bad_input(rig, tmp_path, kind, message):
    key = {"/dev/zero": Path("/dev/zero"), "fifo": tmp_path / "key.fifo", "directory": tmp_path / "key.d",
           "binary": tmp_path / "key.bin", "huge": tmp_path / "key.huge"}[kind]
    if kind == "fifo":
        os.mkfifo(key)
    elif kind == "directory":
        key.mkdir()
    elif kind == "binary":
        key.write_bytes(b"-\xff\x00binary")
    elif kind == "huge":
        key.write_bytes(b"A" * 65536)
    inventory_file(tmp_path / "inv.yml", rig.work, ansible_ssh_private_key_file=str(key))
    proc = run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs), timeout=60)
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (f"error: {tmp_path / 'inv.yml'}:3: host '{HOST}':"
                                                   f" ansible_ssh_private_key_file {key}: {message}")
    assert not rig.runs.exists() or list(rig.runs.iterdir()) == []


def test_an_image_the_kit_does_not_declare_is_refused_before_the_host(rig, tmp_path):
    rig.inventory(RESULT_OK)
    proc = run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                      str(tmp_path / "no-such-known-hosts"), "--runs-dir", str(rig.runs), "--image", "wokrload=reg/x:1",
                      timeout=60)
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == ("error: --image wokrload=reg/x:1: kit smem-probe declares no image"
                                                   " 'wokrload' (its images: workload); name one of them")
    assert not rig.runs.exists() and rig.remote_runs() == []


def test_a_symlinked_key_file_as_a_kubernetes_secret_volume_lays_it_out_is_accepted(rig, tmp_path):
    """Issue #40: `id -> ..data/id -> ..2026_12_06/id` was refused ("Too many levels of symbolic links", exit 2)."""
    volume = tmp_path / "secret-volume"
    (volume / "..2026_12_06").mkdir(parents=True)
    (volume / "..2026_12_06" / "id").write_bytes((STATE / "id_ed25519").read_bytes())
    (volume / "..data").symlink_to("..2026_12_06")
    (volume / "id").symlink_to("..data/id")
    rig.inventory(RESULT_OK)
    inventory_file(tmp_path / "inv.yml", rig.work, ansible_python_interpreter=str(rig.work / "fake-python"),
                   ansible_ssh_private_key_file=str(volume / "id"))
    proc = run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs), "--json", timeout=120)
    assert proc.returncode == ExitCode.FAIL, proc.stderr  # the double's result: the run itself went through
    (run_dir,) = rig.runs.iterdir()
    assert load_manifest(run_dir).status == "complete" and json.loads(proc.stdout)["run_dir"] == str(run_dir)


def test_a_symlink_to_a_fifo_is_still_refused(rig, tmp_path):
    os.mkfifo(tmp_path / "key.fifo")
    (tmp_path / "key").symlink_to(tmp_path / "key.fifo")
    inventory_file(tmp_path / "inv.yml", rig.work, ansible_ssh_private_key_file=str(tmp_path / "key"))
    proc = run_invoke("repro", "smem-probe", "--host", HOST, "--inventory", str(tmp_path / "inv.yml"), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs), timeout=60)
    assert proc.returncode == ExitCode.BAD_INPUT, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path / 'inv.yml'}:3: host '{HOST}': ansible_ssh_private_key_file {tmp_path / 'key'}: not a regular"
        " file (a directory, FIFO or device?); give a private key file")
