#!/usr/bin/env python3
"""Is a GPU visible inside a container on this host? If not, say which known failure it is and what to do.

Installed by reprokit's ansible role gpu_verify as /usr/local/libexec/reprokit/gpu-check; run it by hand too:

    gpu-check --image nvidia/cuda:12.9.1-base-ubuntu24.04@sha256:...      (prints JSON, exit 0 when all is well)

Checks, in order, stopping at the first that fails: the nvidia kernel module is loaded; its device nodes
exist; nvidia-smi works on the host; nvidia-smi works in a container with --gpus all and sees as many GPUs;
and (where systemd runs Docker's cgroups) the container keeps its GPUs across `systemctl daemon-reload`.
Standard library only (Python 3.8+), so it runs with the host's own python3.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
from typing import Callable, Dict, List, Optional, Tuple

Run = Callable[[List[str], float], Tuple[int, str]]


def run_command(argv: List[str], timeout_s: float) -> Tuple[int, str]:
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s)
    except FileNotFoundError:
        return 127, f"{argv[0]}: command not found"
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]}: no answer within {timeout_s:.0f} s"
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


class Host:
    """The files the checks read; tests replace it."""

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def read(self, path: str) -> str:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()

    def glob(self, pattern: str) -> List[str]:
        return sorted(glob.glob(pattern))


def _gpu_lines(output: str) -> List[str]:
    return [line for line in output.splitlines() if re.match(r"GPU \d+:", line.strip())]


def module_version(host: Host) -> Optional[str]:
    """The loaded kernel module's version, from /proc/driver/nvidia/version (None when no module is loaded)."""
    if not host.exists("/proc/driver/nvidia/version"):
        return None
    match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", host.read("/proc/driver/nvidia/version"))
    return match.group(1) if match else "unknown"


def check(run: Run, host: Host, image: str, daemon_reload: bool = True, timeout_s: float = 300) -> Dict:
    checks: List[Dict] = []
    result: Dict = {"ok": False, "checks": checks, "diagnosis": None, "fix": None}

    def record(name: str, ok: bool, detail: str) -> bool:
        checks.append({"name": name, "ok": ok, "detail": detail.strip()})
        return ok

    def fail(diagnosis: str, fix: str) -> Dict:
        result.update(diagnosis=diagnosis, fix=fix)
        return result

    # 1. The kernel module.
    loaded = module_version(host)
    modules = host.read("/proc/modules") if host.exists("/proc/modules") else ""
    if not record("kernel module", loaded is not None, f"nvidia {loaded}" if loaded else "no /proc/driver/nvidia/version"):
        if re.search(r"^nvidia ", modules, re.M):
            return fail("the nvidia module is listed but /proc/driver/nvidia is missing", "reboot the host")
        return fail(
            "the nvidia kernel module is not loaded",
            "load it (`modprobe nvidia`); if that fails, check `dkms status` (did the open module build for this"
            " kernel?), Secure Boot (an unsigned module is refused) and `dmesg | grep -i nvidia`",
        )
    result["module_version"] = loaded

    # 2. Its device nodes.
    gpus_known = len(host.glob("/proc/driver/nvidia/gpus/*"))
    nodes = [p for p in host.glob("/dev/nvidia[0-9]*") if re.fullmatch(r"/dev/nvidia\d+", p)]
    have_ctl = host.exists("/dev/nvidiactl")
    detail = f"/dev/nvidiactl {'present' if have_ctl else 'missing'}, {len(nodes)} of {gpus_known} /dev/nvidiaN"
    if not record("device nodes", have_ctl and len(nodes) >= max(gpus_known, 1), detail):
        return fail(
            f"missing NVIDIA device nodes ({detail}): the module is loaded but nothing created them",
            "create them with `nvidia-ctk system create-device-nodes --control-devices --load-kernel-modules` (or"
            " `nvidia-modprobe -c 0 -u`), and enable nvidia-persistenced so they exist from boot",
        )

    # 3. nvidia-smi on the host.
    code, out = run(["nvidia-smi", "-L"], timeout_s)
    host_gpus = _gpu_lines(out)
    result["host_gpus"] = len(host_gpus)
    if not record("nvidia-smi on the host", code == 0 and bool(host_gpus), out or f"exit {code}"):
        if "Driver/library version mismatch" in out:
            library = re.search(r"NVML library version:\s*(\S+)", out)
            return fail(
                f"driver/library version mismatch: the loaded kernel module is {loaded}, the user-space driver is"
                f" {library.group(1) if library else 'another version'} (the driver was upgraded without a reboot)",
                "reboot the host (or stop everything using the GPUs and reload the nvidia modules)",
            )
        if code == 127:
            return fail("nvidia-smi is not installed: the driver's user-space part is missing",
                        "install the driver (ansible role nvidia_driver)")
        if "No devices were found" in out:
            return fail("the driver sees no GPU (bound to another driver such as vfio-pci, or fallen off the bus)",
                        "check `lspci -nnk -d 10de:` (Kernel driver in use: nvidia) and `dmesg | grep -i xid`")
        return fail(f"nvidia-smi fails on the host: {out.strip().splitlines()[-1] if out.strip() else code}",
                    "read `dmesg | grep -i nvidia` and `journalctl -k`")

    # 4. nvidia-smi in a container.
    code, out = run(["docker", "run", "--rm", "--gpus", "all", image, "nvidia-smi", "-L"], timeout_s)
    container_gpus = _gpu_lines(out)
    result["container_gpus"] = len(container_gpus)
    if not record("nvidia-smi in a container", code == 0 and len(container_gpus) == len(host_gpus), out or f"exit {code}"):
        if code == 127:
            return fail("Docker is not installed (no docker command)", "install it (ansible role docker)")
        if "could not select device driver" in out or "unknown or invalid runtime name: nvidia" in out:
            return fail(
                "Docker has no NVIDIA runtime: the container toolkit is missing or Docker was not configured for it",
                "`nvidia-ctk runtime configure --runtime=docker` then `systemctl restart docker` (ansible role"
                " nvidia_container_toolkit)",
            )
        if "Failed to initialize NVML: Unknown Error" in out:
            return fail(
                "the container was denied the GPU devices (cgroup device rules)",
                "create the /dev/char symlinks (`nvidia-ctk system create-dev-char-symlinks --create-all`) or run"
                " Docker with the cgroupfs cgroup driver; see the cgroup driver issue in ansible role"
                " nvidia_container_toolkit",
            )
        if code == 0:
            return fail(f"the container sees {len(container_gpus)} GPU(s), the host {len(host_gpus)}",
                        "check NVIDIA_VISIBLE_DEVICES defaults in /etc/nvidia-container-runtime/config.toml")
        if "Unable to find image" in out or "pull access denied" in out or "manifest unknown" in out:
            return fail(f"the check image {image} cannot be pulled", "check the registry and docker/images.lock.yml")
        return fail(f"docker run --gpus all fails: {out.strip().splitlines()[-1] if out.strip() else code}",
                    "read `journalctl -u docker`")

    # 5. The cgroup driver issue: GPUs lost by running containers at `systemctl daemon-reload`.
    code, driver = run(["docker", "info", "--format", "{{.CgroupDriver}}"], 60)
    result["cgroup_driver"] = driver.strip()
    if daemon_reload and driver.strip() == "systemd" and host.exists("/run/systemd/system"):
        name = "reprokit-gpu-check"
        run(["docker", "rm", "-f", name], 60)
        code, out = run(["docker", "run", "-d", "--name", name, "--gpus", "all", image, "sleep", "600"], timeout_s)
        if code == 0:
            try:
                run(["systemctl", "daemon-reload"], 120)
                code, out = run(["docker", "exec", name, "nvidia-smi", "-L"], 120)
            finally:
                run(["docker", "rm", "-f", name], 60)
            if not record("GPUs kept across systemctl daemon-reload", code == 0 and bool(_gpu_lines(out)), out):
                return fail(
                    "the cgroup driver issue: with Docker's systemd cgroup driver a running container loses its GPUs"
                    " at `systemctl daemon-reload` (Failed to initialize NVML: Unknown Error)",
                    "create the /dev/char symlinks and their udev rule (nvidia_container_toolkit_dev_char_symlinks:"
                    " true), or set exec-opts [native.cgroupdriver=cgroupfs] in docker_daemon_options",
                )
    result["ok"] = True
    return result


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", required=True, help="image with nvidia-smi's mount point (a CUDA base image)")
    parser.add_argument("--no-daemon-reload-check", action="store_true", help="skip the cgroup driver check")
    parser.add_argument("--timeout", type=float, default=300, help="seconds for each docker command (pulls included)")
    args = parser.parse_args(argv)
    result = check(run_command, Host(), args.image, not args.no_daemon_reload_check, args.timeout)
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
