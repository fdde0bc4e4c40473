"""How long `invoke build` takes when nothing changed, and `invoke provision` on a host already provisioned.

Uses the test services of tests/services/up.d/20-docker.sh (run tests/services/up first): the real
workload Dockerfile with the debootstrapped Debian base in place of the CUDA base (pinned by the local
registry's digest) and the tiny test requirements, and a fresh test host container (systemd, sshd, its own
filesystem) for ansible-playbook. Times

- a no-op rebuild of the workload image (the context tar, `docker build` with every step cached, `docker
  image inspect`): the median of --rebuilds runs after one warm-up build; target < 10 s;
- a provisioning re-run (ansible/site.yml on a host with the GPU doubles of tests/doubles, Docker from the
  distribution, the roles that need NVIDIA's repository left out) on a host
  the first run converged: the median of --reruns runs, each changing nothing; target < 60 s.

    python benchmarks/images_bench.py
    python benchmarks/images_bench.py --skip-provision
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reprokit.config.inventory import local_host  # noqa: E402
from reprokit.config.kit import load_kit  # noqa: E402
from reprokit.hosts.axes import load_inventory  # noqa: E402
from reprokit.hosts.provision import provision  # noqa: E402
from reprokit.images.build import build_image  # noqa: E402
from tests.integration.docker_env import BASE_REF, DOCKER, REASON, start_test_host  # noqa: E402

REBUILD_TARGET_S = 10.0
RERUN_TARGET_S = 60.0


def bench_rebuild(runs: int) -> dict:
    os.environ["REPROKIT_DOCKER"] = DOCKER
    kit = load_kit("ep8-crash", REPO / "kits")[0]

    def once() -> tuple[float, str]:
        started = time.perf_counter()
        built = build_image(kit, "workload", local_host(), base_overrides={"CUDA_DEVEL_IMAGE": BASE_REF},
                            requirements="tests/integration/images/requirements-tiny.lock", say=lambda _: None,
                            record=False)
        return time.perf_counter() - started, built.image_id

    warm_s, image_id = once()
    times = []
    for _ in range(runs):
        elapsed, again = once()
        assert again == image_id, "a no-op rebuild gave another image"
        times.append(elapsed)
    return {"warm_up_s": round(warm_s, 2), "runs_s": [round(t, 2) for t in times],
            "median_s": round(statistics.median(times), 2), "target_s": REBUILD_TARGET_S}


def bench_provision(runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        key = tmp_path / "id_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        host = start_test_host(key.with_suffix(".pub"), prefix="rk-bench", gpu=True)
        try:
            inventory_path = tmp_path / "inventory.yml"
            inventory_path.write_text(
                f"all:\n  hosts:\n    benchhost:\n      ansible_host: 127.0.0.1\n      ansible_port: {host.port}\n"
                f"      ansible_user: admin\n      ansible_ssh_private_key_file: {key}\n")
            known_hosts = tmp_path / "known_hosts"
            known_hosts.write_text(host.known_hosts_line())
            inventory = load_inventory(inventory_path)

            def once() -> tuple[float, dict]:
                started = time.perf_counter()
                result = provision(inventory.host("benchhost"), False, inventory=inventory,
                                   inventory_path=inventory_path, known_hosts=known_hosts,
                                   extra_vars={"docker_install_source": "distro"},
                                   skip_tags=["nvidia_container_toolkit", "gpu_verify"])
                assert result.succeeded, result.output[-2000:]
                return time.perf_counter() - started, result.recap

            converge_s, first = once()
            times = []
            for _ in range(runs):
                elapsed, recap = once()
                assert recap["changed"] == 0, recap
                times.append(elapsed)
            return {"converge_s": round(converge_s, 1), "converge_changed": first["changed"],
                    "reruns_s": [round(t, 1) for t in times], "median_s": round(statistics.median(times), 1),
                    "target_s": RERUN_TARGET_S}
        finally:
            host.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rebuilds", type=int, default=5)
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--skip-provision", action="store_true")
    args = parser.parse_args()
    if REASON:
        print(f"cannot run: {REASON}", file=sys.stderr)
        return 2
    figures = {"machine": f"{os.cpu_count()} cores, docker storage driver "
                          + subprocess.run([DOCKER, "info", "--format", "{{.Driver}}"], capture_output=True,
                                           text=True).stdout.strip()}
    figures["noop_rebuild"] = bench_rebuild(args.rebuilds)
    print(f"no-op rebuild of the workload image: median {figures['noop_rebuild']['median_s']} s over"
          f" {args.rebuilds} runs (target < {REBUILD_TARGET_S:.0f} s)", file=sys.stderr)
    if not args.skip_provision:
        figures["provision_rerun"] = bench_provision(args.reruns)
        print(f"provisioning re-run: median {figures['provision_rerun']['median_s']} s over {args.reruns} runs"
              f" (target < {RERUN_TARGET_S:.0f} s); first run {figures['provision_rerun']['converge_s']} s",
              file=sys.stderr)
    print(json.dumps(figures, indent=2))
    ok = figures["noop_rebuild"]["median_s"] < REBUILD_TARGET_S and (
        args.skip_provision or figures["provision_rerun"]["median_s"] < RERUN_TARGET_S)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
