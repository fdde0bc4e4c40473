"""A chaos run over the 8 SSH test hosts (tests/services/up brings them up): N runs, faults injected at random.

Each run is a real `invoke repro smem-probe --host hN` (a subprocess, as an operator would start it) whose probe is
a shell test double on the host (it sleeps, writes 100 kB, writes its result). One fault at most per run, chosen at
random, lands at a random moment of the run:
  sshd_killed         the host's sshd processes serving the run's connections are SIGKILLed (the listener stays)
  link_reset          the run's TCP connections to the host are destroyed (`ss -K`)
  disk_full           the run's workdir (a tmpfs in the host's mount namespace) is filled to the last byte
  control_sigkill     the control process (`invoke repro`) and its children are SIGKILLed
  concurrent_collect  the run stops its pull-back at a 50 kB cap (incomplete), then two `invoke collect` start at once
  setsid_workload     the probe double-forks a `setsid sleep 600` that outlives it
With --slurm (the default where the test Slurm cluster is up, tests/services/up.d/40-slurm.sh), the cluster's login
node is one more host: its runs are Slurm jobs, each with at most one of
  query_failure       squeue, sacct and scontrol all fail as a busy controller does, 3-10 s, while the job runs
  query_hang          the three tools say nothing past the I/O timeout, each call, while the job runs (the
                      Slurm runs set reprokit.io_timeout_s to --slurm-io-timeout-s, 10 s by default: a site
                      setting, so that a hang costs about 30 s here instead of the default 30 s timeout's 90 s)
  sbatch_noise        sbatch prints a maintenance notice after the job id
  node_down           the job's node is set DOWN while it runs (NODE_FAIL; the nodes are resumed after)
injected through this benchmark's own wrappers of the job tools (a second sshd of the login node whose sessions'
PATH starts with them: no other run of the shared cluster meets them). After each Slurm run the queue is searched
for jobs of the run (must be none). --slurm-workers N runs N Slurm hosts at once (cluster1..N: one login node, each
its own workdir, lock and fault injector); a node set DOWN fails the other workers' jobs on it too (NODE_FAIL).
A run left detached, incomplete or killed is collected (after the disk is freed, as an operator would). Then each
record is checked (`check-record`), the host is searched for processes of the run (its mark in /proc, the escaped
pid) and for its lock. Faults are bounded in count (--max-faults) and time (each within --fault-window-s of its
run's start or of its record's creation; each run and collect within --run-timeout-s; no run starts after --max-minutes).

Prints: runs, faults by kind (and those that found nothing to hit), records by final outcome, collect outcomes,
files outside runs/ (must be 0), check-record failures (an artifact that does not match its sha256: must be 0),
processes left on hosts (must be 0), locks left, Slurm jobs left (must be 0), and "lost": records still detached,
incomplete or killed after `invoke collect` (must be 0). A run killed before it wrote its record leaves its lock: as the
README says, the operator removes it with `invoke unlock` (counted).
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reprokit.records.run_dir import load_manifest, verify_record  # noqa: E402
from tests.doubles.libcuda import gpu_python  # noqa: E402
from tests.integration.remote.conftest import ADDRESSES, STATE, host_workdir, known_hosts_for, sshd_master_pid, write_inventory  # noqa: E402

HOSTS = [f"h{i}" for i in range(1, 9)]
CLUSTER = "cluster"
SLURM_FAULTS = ("query_failure", "query_hang", "sbatch_noise", "node_down")
FAULTS = ("sshd_killed", "link_reset", "disk_full", "control_sigkill", "concurrent_collect", "setsid_workload")
COLLECTABLE = ("detached", "incomplete", "killed")
RESULT = ('printf \'{"workload": "smem-probe", "schema_version": 1, "status": "ok", "devices": []}\' > result.json;'
          ' echo "probe done"; exit 0')
ESCAPE = ("setsid sh -c 'setsid sleep 600 < /dev/null > /dev/null 2>&1 & echo $! > escapee.pid' < /dev/null;"
          " while [ ! -s escapee.pid ]; do sleep 0.05; done; ")
FULL_TMPFS = "size=8m,mode=0755"


def sh(*argv: str, check: bool = False, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, **kw)


def in_host(host: str, *argv: str) -> subprocess.CompletedProcess:
    """A command in the host's own mount namespace (its sshd's: `ip netns exec` gave it one)."""
    return sh("nsenter", "--mount", "--target", str(sshd_master_pid(host)), *argv)


def process_tree(root: int) -> set[int]:
    parents: dict[int, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(fields[1])].append(int(stat.parent.name))
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += parents.get(pid, [])
    return tree


def local_ports(host: str, pids: set[int]) -> list[str]:
    """The local ports of the TCP connections to the host's sshd held by ``pids``."""
    out = sh("ss", "-tnpH", "dst", f"{ADDRESSES[host]}:22").stdout
    return [line.split()[3].rsplit(":", 1)[1] for line in out.splitlines()
            if any(int(p) in pids for p in re.findall(r"pid=(\d+)", line))]


def kill_sshd_sessions(host: str, ports: list[str]) -> int:
    master, killed = sshd_master_pid(host), 0
    for port in ports:
        out = sh("ip", "netns", "exec", f"rk-{host}", "ss", "-tnpH", "sport", "=", ":22", "dst",
                 f"10.213.0.1:{port}").stdout
        for pid in {int(p) for p in re.findall(r"pid=(\d+)", out)} - {master}:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def reset_links(host: str, ports: list[str]) -> int:
    return sum(len(sh("ss", "-K", "-tnH", "dst", ADDRESSES[host], "dport", "=", ":22", "sport", "=", f":{port}")
                   .stdout.splitlines()) for port in ports)


def marked(run_id: str) -> list[int]:
    """Processes of this machine (the hosts share its process table) that carry a mark of ``run_id``."""
    needle = f"REPROKIT_RUN={run_id}/".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if any(v.startswith(needle) for v in environ.read_bytes().split(b"\0")):
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Rig:
    """The hosts' workdirs and inventories, the control side's directories, the counters."""

    def __init__(self, base: Path, args):
        self.base, self.args = base, args
        self.cwd = base / "control"  # every control process runs here: nothing may appear outside runs/
        self.runs = self.cwd / "runs"
        self.inputs = base / "inputs"
        for d in (self.runs, self.inputs):
            d.mkdir(parents=True)
        self.known = known_hosts_for(self.inputs / "known_hosts", *HOSTS)
        self.work = {h: host_workdir(h, "chaos") for h in HOSTS}
        self.full = {h: host_workdir(h, "chaos-full") for h in HOSTS}  # a tmpfs there, in the host's namespace
        self.python = {h: host_workdir(h, "chaos-bin") / "fake-python" for h in HOSTS}
        self.lock = threading.Lock()
        self.counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.faults_left = args.max_faults
        self.log = open(base / "runs.jsonl", "w")
        self.hosts: list[str] = HOSTS
        self.slurm: dict = {}  # Slurm host -> (injector, workdir, known_hosts, inventory, python), with --slurm
        for h in HOSTS:
            in_host(h, "mount", "-t", "tmpfs", "-o", f"{FULL_TMPFS},uid={uid()},gid={uid()}", "tmpfs", str(self.full[h]))

    def inventory(self, host: str, full: bool) -> Path:
        path = self.inputs / f"inv-{host}{'-full' if full else ''}.yml"
        if not path.exists():
            write_inventory(path, {host: {"workdir": self.full[host] if full else self.work[host],
                                          "ansible_python_interpreter": self.python[host]}})
        return path

    def write_probe(self, host: str, body: str) -> None:
        script = self.python[host]
        script.write_text('#!/bin/sh\ncase "$*" in\n  *smem_probe*)\n' + body + f'\n    ;;\nesac\nexec {gpu_python()} "$@"\n')
        script.chmod(0o755)
        os.chown(script, uid(), uid())

    def invoke(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "invoke", "--search-root", str(REPO), *args], cwd=self.cwd,
                                env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)

    def count(self, table: str, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[table][key] += n

    def take_fault(self) -> bool:
        with self.lock:
            if self.faults_left <= 0:
                return False
            self.faults_left -= 1
            return True


def uid() -> int:
    import pwd  # noqa: PLC0415
    return pwd.getpwnam("rkuser").pw_uid


def wait(proc: subprocess.Popen, timeout_s: float) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return -9, "timed out: " + (err.strip().splitlines() or [""])[-1]
    return proc.returncode, err


def inject(rig: Rig, host: str, fault: str, proc: subprocess.Popen, workdir: Path) -> bool:
    """Apply ``fault`` to the run of ``proc`` now; False when it found nothing to hit (no connection open)."""
    if fault == "control_sigkill":
        os.killpg(proc.pid, signal.SIGKILL)
        return True
    if fault == "disk_full":
        in_host(host, "sh", "-c", f"cat /dev/zero > {workdir}/fill 2>/dev/null")
        return True
    ports = local_ports(host, process_tree(proc.pid))
    if not ports:
        return False
    return (kill_sshd_sessions if fault == "sshd_killed" else reset_links)(host, ports) > 0


def land(rig: Rig, host: str, fault: str, proc: subprocess.Popen, workdir: Path, before: set[str],
         rng: random.Random) -> None:
    """Inject ``fault`` at a random moment: a quarter from the run's start (connect, lock, code), the others from
    when its record appears (fingerprint, probe, pull-back, report)."""
    if rng.random() >= 0.25:
        deadline = time.monotonic() + rig.args.run_timeout_s
        while find_record(rig, host, before) is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    try:
        proc.wait(timeout=rng.uniform(0.0, rig.args.fault_window_s))
        rig.count("faults missed (the run had ended)", fault)
        return
    except subprocess.TimeoutExpired:
        pass
    if inject(rig, host, fault, proc, workdir):
        rig.count("faults", fault)
    else:
        rig.count("faults missed (no connection open)", fault)


def find_record(rig: Rig, host: str, before: set[str]) -> Path | None:
    new = [p for p in rig.runs.iterdir() if p.name not in before and not p.name.startswith(".") and f"-{host}-" in p.name]
    return new[0] if len(new) == 1 else None


def collect(rig: Rig, host: str, run_dir: Path, inventory: Path, at_once: int, known: Path | None = None,
            env: dict | None = None) -> None:
    """``at_once`` collects of the record; each outcome counted: completed, waited then refused, refused, failed."""
    for _attempt in range(3):
        procs = [rig.invoke("collect", run_dir.name, "--runs-dir", str(rig.runs), "--inventory", str(inventory),
                            "--known-hosts", str(known or rig.known), "--wait", "120", env=env) for _ in range(at_once)]
        results = [wait(p, rig.args.run_timeout_s) for p in procs]
        for code, err in results:
            last = (err.strip().splitlines() or [""])[-1]
            if code in (0, 1, 3, 5):
                kind = "completed"
            elif code == 2 and "run is 'complete'" in last:
                kind = "waited, then refused: record complete" if "waiting for the other" in err else "refused: record complete"
            elif code == 2 and "is writing this" in last:
                kind = "refused: record busy"
            else:
                kind = f"failed (exit {code})"
            rig.count("collect", kind)
        if load_manifest(run_dir).status not in COLLECTABLE:
            return
        time.sleep(2)
        at_once = 1


def unlock(rig: Rig, host: str, inventory: Path) -> str:
    """`invoke unlock` of a lock whose run was killed before it wrote its record; --force for one still "starting"."""
    argv = ("unlock", "--host", host, "--inventory", str(inventory), "--known-hosts", str(rig.known))
    code, err = wait(rig.invoke(*argv), rig.args.run_timeout_s)
    kind = "unlocked"
    if code != 0:
        code, err = wait(rig.invoke(*argv, "--force"), rig.args.run_timeout_s)
        kind = "unlocked with --force (the lock had no owner file yet)"
    rig.count("unlocks after a kill before the record", kind if code == 0 else f"failed (exit {code})")
    return kind


def host_files_outside(rig: Rig, host: str) -> list[str]:
    """Files in the hosts' chaos workdirs outside runs/, code/, cache/ (the fill file of disk_full aside)."""
    allowed = ("runs", "code", "cache")
    outside = [str(p) for p in rig.work[host].rglob("*") if p.is_file()
               and p.relative_to(rig.work[host]).parts[0] not in allowed]
    listed = in_host(host, "find", str(rig.full[host]), "-type", "f").stdout.split()
    outside += [p for p in listed if Path(p).relative_to(rig.full[host]).parts[0] not in (*allowed, "fill")]
    return outside


def one_run(rig: Rig, host: str, index: int, rng: random.Random) -> None:
    args = rig.args
    fault = rng.choice(FAULTS) if rng.random() < args.fault_rate and rig.take_fault() else "none"
    full = fault == "disk_full"
    workdir = rig.full[host] if full else rig.work[host]
    inventory = rig.inventory(host, full)
    rig.write_probe(host, f"sleep {rng.uniform(0.5, 2.5):.2f}; head -c 100000 /dev/urandom > data.bin; "
                          f"{ESCAPE if fault == 'setsid_workload' else ''}{RESULT}")
    before = {p.name for p in rig.runs.iterdir()}
    env = {"INVOKE_REPROKIT_MAX_PULL_BYTES": "50K"} if fault == "concurrent_collect" else None
    proc = rig.invoke("repro", "smem-probe", "--host", host, "--inventory", str(inventory), "--known-hosts",
                      str(rig.known), "--runs-dir", str(rig.runs), "--quiet", env=env)
    if fault in ("sshd_killed", "link_reset", "disk_full", "control_sigkill"):
        land(rig, host, fault, proc, workdir, before, rng)
    elif fault != "none":
        rig.count("faults", fault)
    code, err = wait(proc, args.run_timeout_s)
    run_dir = find_record(rig, host, before)
    entry = {"i": index, "host": host, "fault": fault, "exit": code, "said": (err.strip().splitlines() or [""])[-1][:300]}
    if full:
        in_host(host, "rm", "-f", f"{workdir}/fill")  # the operator frees the disk, then collects
    if run_dir is None:
        rig.count("records", f"none (exit {code})")
    else:
        entry["run"] = run_dir.name
        entry["after_run"] = status = load_manifest(run_dir).status
        if status in COLLECTABLE:
            collect(rig, host, run_dir, inventory, 2 if fault == "concurrent_collect" else 1)
        manifest = load_manifest(run_dir)
        entry["final"] = manifest.status
        rig.count("records", manifest.status)
        problems = verify_record(run_dir)  # what `invoke check-record` verifies: each artifact against its sha256
        if problems:
            rig.count("check-record failures", manifest.status, 1)
            entry["problems"] = problems[:5]
        left = marked(run_dir.name)
        escapee = run_dir / "steps" / "probe" / "escapee.pid"
        if escapee.exists() and alive(int(escapee.read_text())):
            left = sorted({*left, int(escapee.read_text())})
        rig.count("processes left", "on hosts", len(left))
        entry["left"] = left
        if manifest.host_left:
            entry["host_left"] = manifest.host_left
    lock_here = (workdir / "lock").exists() if not full else in_host(host, "test", "-e", f"{workdir}/lock").returncode == 0
    if lock_here and run_dir is None and fault == "control_sigkill":  # killed before its record: the operator unlocks
        entry["unlock"] = unlock(rig, host, inventory)
        lock_here = (workdir / "lock").exists()
    if lock_here:
        rig.count("locks left", host)
        entry["lock_left"] = True
    with rig.lock:
        rig.log.write(json.dumps(entry) + "\n")
        rig.log.flush()
    if rig.args.verbose:
        print(json.dumps(entry), flush=True)


def slurm_rig(rig: Rig, name: str):
    """A Slurm host: its workdir, the fault injector (its own sshd of the login node) and the inventory through it."""
    from tests.integration.slurm.conftest import FaultyLogin, fake_python, inventory, workdir  # noqa: PLC0415

    faulty = FaultyLogin(Path(f"/srv/rk-hosts/login/.faults-chaos-{name}"))
    faulty.start()
    work = workdir(f"chaos-slurm-{name}")
    known = faulty.known_hosts(rig.inputs / f"known_hosts_{name}")
    python = fake_python(work, "true")
    inv = inventory(rig.inputs / f"inv-{name}.yml", work, ansible_python_interpreter=str(python), ansible_port=faulty.port)
    inv.write_text(inv.read_text().replace(f"    {CLUSTER}:\n", f"    {name}:\n"))
    return faulty, work, known, inv, python


def slurm_run(rig: Rig, name: str, index: int, rng: random.Random) -> None:
    """One run on the Slurm cluster with at most one Slurm fault; its record, queue and lock checked after."""
    from tests.integration.slurm.conftest import resume_nodes, squeue  # noqa: PLC0415

    faulty, work, known, inv, python = rig.slurm[name]
    env = {"INVOKE_REPROKIT_IO_TIMEOUT_S": str(rig.args.slurm_io_timeout_s)}
    hang_s = int(rig.args.slurm_io_timeout_s) + 5
    fault = rng.choice(SLURM_FAULTS) if rng.random() < rig.args.fault_rate and rig.take_fault() else "none"
    python.write_text('#!/bin/sh\ncase "$*" in\n  *smem_probe*)\n'
                      f'sleep {rng.uniform(2.0, 6.0):.2f}; head -c 100000 /dev/urandom > data.bin; {RESULT}'
                      f'\n    ;;\nesac\nexec {gpu_python()} "$@"\n')
    if fault == "sbatch_noise":
        faulty.after("sbatch", "echo 'NOTICE: scheduled maintenance on Sunday 06:00 UTC'\n")
    before = {p.name for p in rig.runs.iterdir()}
    proc = rig.invoke("repro", "smem-probe", "--host", name, "--inventory", str(inv), "--known-hosts", str(known),
                      "--runs-dir", str(rig.runs), "--quiet", env=env)
    try:
        if fault in ("query_failure", "query_hang", "node_down"):
            job = _running_job(work, proc)
            if job is None:
                rig.count("faults missed (the run had ended)", fault)
            else:
                rig.count("faults", fault)
                if fault == "node_down":
                    sh("scontrol", "update", f"nodename={job['nodes']}", "state=down", "reason=reprokit-chaos")
                for tool in ("squeue", "sacct", "scontrol") if fault.startswith("query") else ():
                    if fault == "query_failure":
                        faulty.fail(tool, rng.uniform(3.0, 10.0))
                    else:
                        faulty.hang(tool, hang_s)
                if fault == "query_hang":
                    time.sleep(2 * hang_s + 5)
                    faulty.heal()
        elif fault != "none":
            rig.count("faults", fault)
        code, err = wait(proc, rig.args.run_timeout_s)
    finally:
        faulty.heal()
        if fault == "node_down":
            resume_nodes()
    run_dir = find_record(rig, name, before)
    entry = {"i": index, "host": name, "fault": fault, "exit": code, "said": (err.strip().splitlines() or [""])[-1][:300]}
    if run_dir is None:
        rig.count("records", f"none (exit {code})")
    else:
        entry["run"] = run_dir.name
        if load_manifest(run_dir).status in COLLECTABLE:
            collect(rig, name, run_dir, inv, 1, known, env)
        manifest = load_manifest(run_dir)
        entry["final"] = manifest.status
        rig.count("records", manifest.status)
        probe = next((e for e in manifest.steps if e.name == "probe"), None)
        entry["probe"] = [probe.status, (probe.launch or {}).get("state")] if probe else None
        if verify_record(run_dir):
            rig.count("check-record failures", manifest.status, 1)
        rig.count("processes left", "on hosts", len(marked(run_dir.name)))
    jobs = squeue(str(work))
    rig.count("slurm jobs left", "in the queue", len(jobs))
    if (work / "locks" / name).exists():
        rig.count("locks left", name)
    with rig.lock:
        rig.log.write(json.dumps(entry) + "\n")
        rig.log.flush()
    if rig.args.verbose:
        print(json.dumps(entry), flush=True)


def _running_job(work: Path, proc: subprocess.Popen) -> dict | None:
    from tests.integration.slurm.conftest import squeue  # noqa: PLC0415

    deadline = time.monotonic() + 90
    while proc.poll() is None and time.monotonic() < deadline:
        jobs = [j for j in squeue(f"{work}/") if j["state"] == "RUNNING" and j["name"].endswith("-probe")]
        if jobs:
            return jobs[0]
        time.sleep(0.2)
    return None


def worker(rig: Rig, host: str, next_index, deadline: float, seed: int) -> None:
    rng = random.Random(f"{seed}-{host}")
    while time.monotonic() < deadline and (index := next_index()) is not None:
        try:
            (slurm_run(rig, host, index, rng) if host in rig.slurm else one_run(rig, host, index, rng))
        except Exception as exc:  # noqa: BLE001 - a harness failure is counted, and the chaos goes on
            rig.count("harness errors", f"{type(exc).__name__}: {exc}"[:200])


def report(rig: Rig, started: float, runs: int) -> None:
    outside = [str(p) for p in rig.cwd.rglob("*") if p.is_file() and rig.runs not in p.parents]
    partials = [str(p) for p in rig.runs.rglob(".partial-*")]
    host_outside = [f for h in HOSTS for f in host_files_outside(rig, h)]
    counts = rig.counts
    print(f"chaos: {runs} runs over {len(rig.hosts)} hosts in {time.monotonic() - started:.0f} s (seed {rig.args.seed})")
    for table in ("faults", "faults missed (the run had ended)", "faults missed (no connection open)", "records",
                  "collect", "unlocks after a kill before the record", "check-record failures", "locks left",
                  "harness errors"):
        items = ", ".join(f"{k} {v}" for k, v in sorted(counts[table].items())) or "none"
        print(f"  {table}: {items} (total {sum(counts[table].values())})")
    print(f"  files outside runs/ on this machine: {len(outside)}; .partial files left in runs/: {len(partials)}")
    print(f"  files outside runs/, code/, cache/ on the hosts: {len(host_outside)}")
    print(f"  processes left on hosts: {counts['processes left']['on hosts']}")
    lost = sum(v for k, v in counts["records"].items() if k in COLLECTABLE)
    print(f"  lost (records still detached, incomplete or killed once collected): {lost}")
    if rig.slurm:
        print(f"  Slurm jobs left in the queue: {counts['slurm jobs left']['in the queue']}")
    for path in (outside + partials + host_outside)[:20]:
        print(f"    {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--fault-rate", type=float, default=0.75, help="the share of runs that get a fault")
    parser.add_argument("--max-faults", type=int, default=1000)
    parser.add_argument("--fault-window-s", type=float, default=4.0)
    parser.add_argument("--run-timeout-s", type=float, default=300.0)
    parser.add_argument("--max-minutes", type=float, default=90.0)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--slurm-workers", type=int, default=1, help="Slurm hosts run at once (one login node)")
    parser.add_argument("--slurm-io-timeout-s", type=float, default=10.0,
                        help="reprokit.io_timeout_s of the Slurm runs (a query hang lasts it plus 5 s per call)")
    parser.add_argument("--slurm", action=argparse.BooleanOptionalAction, default=None,
                        help="one more host: the test Slurm cluster, with Slurm faults (default: where it is up)")
    args = parser.parse_args()
    if not (STATE / "id_ed25519").exists():
        sys.exit("SSH test hosts are not up: run tests/services/up first")
    # One chaos run at a time: two would inject faults into each other's runs and count each other's leftovers.
    lock_path = STATE / "chaos.lock"
    lock = open(lock_path, "a+")  # noqa: SIM115 - held until the process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "?"
        sys.exit(f"chaos: {lock_path} is held by another chaos run (pid {holder}); wait for it to end, or stop it")
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    hosts = HOSTS[:args.hosts]
    base = Path(tempfile.mkdtemp(prefix="rk-chaos-"))
    rig = Rig(base, args)
    if args.slurm is None:
        from tests.integration.slurm.conftest import REASON as SLURM_REASON  # noqa: PLC0415
        args.slurm = SLURM_REASON is None
    names = [f"{CLUSTER}{n}" for n in range(1, args.slurm_workers + 1)] if args.slurm else []
    rig.slurm = {name: slurm_rig(rig, name) for name in names}
    hosts = hosts + names
    rig.hosts = hosts
    print(f"chaos: {args.runs} runs, records and log in {base}", flush=True)
    counter = iter(range(args.runs))
    take = threading.Lock()

    def next_index():
        with take:
            return next(counter, None)

    started = time.monotonic()
    deadline = started + args.max_minutes * 60
    threads = [threading.Thread(target=worker, args=(rig, h, next_index, deadline, args.seed)) for h in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = sum(1 for _ in open(base / "runs.jsonl"))
    try:
        report(rig, started, done)
    finally:
        for faulty, *_ in rig.slurm.values():
            faulty.stop()
        for h in HOSTS:
            in_host(h, "umount", "-l", str(rig.full[h]))


if __name__ == "__main__":
    main()
