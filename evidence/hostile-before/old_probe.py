"""Run three hostile scenarios against the code before #17 (worktree /tmp/b-old), to record that they failed."""
import json, shutil, subprocess, sys, uuid
from pathlib import Path
sys.path.insert(0, "/tmp/b-old")
from reprokit.config.inventory import load_inventory
from reprokit.config.kit import load_kit_file
from reprokit.hosts.factory import ConnectOptions
from reprokit.records.run import load_manifest
from reprokit.runner import run_kit
from tests.integration.remote.conftest import ADDRESSES, STATE, host_workdir, known_hosts_for

RESULT_OK = ('printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json;'
             ' echo "probe done"; exit 0')
tmp = Path("/tmp/b-oldrun") / uuid.uuid4().hex[:6]
tmp.mkdir()
kit = Path("/tmp/b-old/kits/smem-probe.yml")
known = known_hosts_for(tmp / "known_hosts", "h2")

def run(tag, body, workdir=None):
    work = host_workdir("h2", f"old-{tag}")
    script = work / "fake-python"
    script.write_text('#!/bin/sh\ncase "$*" in\n  *smem_probe*)\n' + body + '\n    ;;\nesac\nexec python3 "$@"\n')
    script.chmod(0o755); shutil.chown(script, "rkuser", "rkuser")
    values = {"ansible_host": ADDRESSES["h2"], "ansible_user": "rkuser", "ansible_ssh_private_key_file": str(STATE / "id_ed25519"),
              "runtime": "native", "cpu_only": True, "workdir": str(workdir or work), "ansible_python_interpreter": str(script)}
    inv_path = tmp / f"inv-{tag}.yml"
    inv_path.write_text("all:\n  hosts:\n    h2:\n" + "".join(f"      {k}: {json.dumps(v)}\n" for k, v in values.items()))
    inv = load_inventory(inv_path)
    msgs = []
    try:
        out = run_kit(load_kit_file(kit), kit, inv.host("h2"), tmp / f"runs-{tag}", kit.parent, say=msgs.append, inventory=inv,
                      options=ConnectOptions(known_hosts=known))
        m = load_manifest(out.run_dir)
        print(tag, "->", m["status"], out.exit_code, m.get("status_detail"))
    except BaseException as exc:
        print(tag, "-> raised", type(exc).__name__, str(exc)[:200])
    return work

plant = tmp / "PLANT"
work = run("forge", f'mkdir -p "$(printf "d\\n7 ")/{str(plant).lstrip("/")}"; echo evil > "$(printf "d\\n7 ")/{str(plant).lstrip("/")}/planted.txt"; echo evil-host > {plant}.src; ' + RESULT_OK)
print("forge: wrote outside the run:", sorted(str(p) for p in tmp.glob("PLANT*")), "host runs left:", list((work/"runs").iterdir()) if (work/"runs").exists() else None)
work = run("unreadable", "echo x > locked.bin; chmod 000 locked.bin; " + RESULT_OK)
print("unreadable: host copy left:", list((work / "runs").iterdir()) if (work / "runs").exists() else None)
marker = Path.home()
tag = uuid.uuid4().hex[:6]
base = host_workdir("h2", "old-quote")
run("quote", RESULT_OK, workdir=f"{base}/a b;touch /tmp/rkq-old-{tag};x")
print("quote: marker created:", Path(f"/tmp/rkq-old-{tag}").exists())
