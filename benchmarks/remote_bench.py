"""Remote execution figures on the SSH test hosts (tests/services/up brings them up).

Prints, on one run of this machine:
  1. the kit's overhead per remote step on a warm connection: a remote run of the fingerprint workload
     minus a local run of the same workload (median of N);
  2. pull-back throughput (SFTP, resumable, sha256-verified) against `scp -r` of the same files over the same link;
  3. the smem-probe kit fanned out to 8 test hosts against the same kit on one host (wall time ratio), with the CPU
     seconds each side spent: the control process (its threads and the ssh clients it reaped) and, where this
     machine lets root make a cgroup v1 cpuacct group, every process of the test hosts (their sshd moved into it,
     so what their sessions start is counted too). The test hosts share this machine's cores with the control
     plane, so the CPU of a fan-out divided by the cores sets a floor on its wall time here.
Goals (issue: remote hosts): overhead < 0.5 s, pull-back >= 80% of scp, fan-out <= 1.5x one host.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reprokit.config.kit import load_kit  # noqa: E402
from reprokit.hosts.axes import load_inventory  # noqa: E402
from reprokit.hosts.factory import ConnectOptions, executor_for  # noqa: E402
from reprokit.hosts.launch import StepSpec  # noqa: E402
from reprokit.run.kit_run import run_kit  # noqa: E402
from tests.integration.remote.conftest import STATE, host_workdir, known_hosts_for, write_inventory  # noqa: E402


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(first, second, repeats: int) -> tuple[float, float]:
    """Medians of ``first`` and ``second`` run in turn, so that a load coming and going hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, into in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            into.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def hosts_cgroup(names) -> Path | None:
    """A cpuacct group holding the test hosts' sshd (and so all they start), or None where one cannot be made."""
    group = CPUACCT / "rk-bench-hosts"
    try:
        group.mkdir(exist_ok=True)
        for name in names:
            (group / "cgroup.procs").write_text((STATE / name / "sshd.pid").read_text().strip())
    except OSError:
        return None
    return group


def cpu_s(group: Path | None) -> tuple[float, float | None]:
    """CPU seconds so far: this process and its reaped children; the hosts' group (None without one)."""
    own = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    return own, (int((group / "cpuacct.usage").read_text()) / 1e9 if group else None)


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pull-mib", type=int, default=256, help="size of the pull-back set (4 files)")
    args = parser.parse_args()
    if not (STATE / "id_ed25519").exists():
        sys.exit("SSH test hosts are not up: run tests/services/up first")
    tmp = Path(tempfile.mkdtemp(prefix="rk-bench-"))
    hosts = {f"h{i}": {"workdir": host_workdir(f"h{i}", "bench")} for i in range(1, 9)}
    inventory_path = write_inventory(tmp / "inv.yml", hosts, groups={"all8": list(hosts)})
    known = known_hosts_for(tmp / "known_hosts", *hosts)
    inventory = load_inventory(inventory_path)
    options = ConnectOptions(known_hosts=known)

    # 1. overhead per remote step, warm connection
    ex = executor_for(inventory.host("h1"), inventory, Path("runs"), options, say=lambda m: None)
    ex.prepare("bench-overhead")
    step = [0]

    def remote_step():
        step[0] += 1
        out = tmp / "overhead" / str(step[0])
        ex.run_step(StepSpec("reprokit.workloads.fingerprint", {}, out, out / "step.log", 60, f"s{step[0]}"))

    def local_step():
        out = tmp / "local" / str(time.perf_counter_ns())
        subprocess.run([sys.executable, "-m", "reprokit.workloads.fingerprint", "--out-dir", str(out)], cwd=REPO,
                       check=True, capture_output=True)

    remote_step()  # warm: code shipped, interpreter caches
    remote_s = median_time(remote_step, args.repeats)
    local_s = median_time(local_step, args.repeats)
    print(f"overhead per remote step (warm connection): {remote_s - local_s:.3f} s"
          f"  (remote {remote_s:.3f} s - local {local_s:.3f} s, median of {args.repeats})")

    # 2. pull-back vs scp, same files, same link
    remote_dir = f"{hosts['h1']['workdir']}/pullset"
    per_file = args.pull_mib // 4
    ex.transport.sh(f"mkdir -p {remote_dir} && for i in 1 2 3 4; do head -c {per_file}M /dev/urandom > {remote_dir}/f$i.bin; done",
                    timeout_s=300)
    total_mb = 4 * per_file * 1.048576

    def pull():
        out = Path(tempfile.mkdtemp(dir=tmp))
        ex.pullback.pull(remote_dir, out)

    def scp():
        out = Path(tempfile.mkdtemp(dir=tmp))
        subprocess.run(["scp", "-q", "-r", "-i", str(STATE / "id_ed25519"), "-o", f"UserKnownHostsFile={known}",
                        "-o", "StrictHostKeyChecking=yes", f"rkuser@10.213.0.11:{remote_dir}", str(out)], check=True)

    pull_s, scp_s = interleaved(pull, scp, args.repeats)  # turn about: both see the same load of the shared cores
    print(f"pull-back: {total_mb / pull_s:.0f} MB/s (sha256-verified) vs scp {total_mb / scp_s:.0f} MB/s:"
          f" {scp_s / pull_s:.0%} of scp  ({total_mb:.0f} MB, median of {args.repeats}, turn about; load {load()})")
    ex.finish()

    # 3. fan-out: one host vs eight
    kit, kit_path = load_kit("smem-probe", REPO / "kits")

    def on(names):
        def one(name):
            run_kit(kit, kit_path, inventory.host(name), tmp / "runs", REPO / "kits", say=lambda m: None,
                    inventory=inventory, options=options)
        with ThreadPoolExecutor(max_workers=len(names)) as pool:
            list(pool.map(one, names))

    on(["h1"])  # warm: the code shipped once
    group = hosts_cgroup(hosts)
    spent: dict[int, list[tuple[float, float | None]]] = {1: [], 8: []}

    def counted(names):
        def run():
            before = cpu_s(group)
            on(names)
            after = cpu_s(group)
            spent[len(names)].append((after[0] - before[0], None if group is None else after[1] - before[1]))
        return run

    one_s, eight_s = interleaved(counted(["h1"]), counted(list(hosts)), args.repeats)
    print(f"fan-out: smem-probe kit on 8 hosts {eight_s:.2f} s vs 1 host {one_s:.2f} s: {eight_s / one_s:.2f}x"
          f" (median of {args.repeats}, turn about; load {load()})")
    cores = len(os.sched_getaffinity(0))
    for n, runs in spent.items():
        control = statistics.median(r[0] for r in runs)
        if group is None:
            print(f"  CPU of {n} host(s): control {control:.2f} s; the hosts' CPU not counted (no cpuacct group here)")
            continue
        on_hosts = statistics.median(r[1] for r in runs)
        print(f"  CPU of {n} host(s): control {control:.2f} s + hosts {on_hosts:.2f} s = {control + on_hosts:.2f} s:"
              f" on {cores} cores no less than {(control + on_hosts) / cores:.2f} s of wall time")
    if group is not None:
        for pid in (group / "cgroup.procs").read_text().split():
            (CPUACCT / "cgroup.procs").write_text(pid)  # back to the root group
        group.rmdir()
    subprocess.run(["rm", "-rf", str(tmp)], check=False)


if __name__ == "__main__":
    main()
