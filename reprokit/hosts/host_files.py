"""A step's inputs on its host, and the host's models and caches as its workloads see them.

Staged files are verified by sha256 where they land. A file of the run (an earlier step's result) goes
into the step's own directory (``inputs/<param>/<name>``), so it comes back with the record; a file of the
control machine's cache (a wheel) goes into the host's cache, content-addressed, so an offline host gets
it once and keeps it. The docker runtime mounts the host's cache directory read-write and its model
directory read-only at the same paths as on the host, so a host path means the same inside a container;
only the step directory is seen as ``/out``.
"""

from __future__ import annotations

from reprokit.config.inventory import Host
from reprokit.errors import HostError
from reprokit.hosts import shell
from reprokit.hosts.access.base import Connection
from reprokit.records.inputs import InputFile

CONTAINER_STEP_DIR = "/out"
# cache directories under the host's cache_dir, and the variable that points each tool at its own
CACHE_ENV = {"REPROKIT_CACHE": "reprokit", "HF_HOME": "huggingface", "TRITON_CACHE_DIR": "triton",
             "FLASHINFER_WORKSPACE_BASE": "flashinfer"}


def cache_env(host: Host, names: tuple[str, ...] = tuple(CACHE_ENV)) -> list[str]:
    """``NAME=<cache_dir>/<sub>`` for the named cache variables."""
    return [f"{name}={host.host_cache_dir}/{CACHE_ENV[name]}" for name in names]


def gpu_env(host: Host) -> list[str]:
    """``CUDA_VISIBLE_DEVICES=<the host's GPUs>`` where the inventory pins the host to some of the machine's GPUs."""
    return [f"CUDA_VISIBLE_DEVICES={host.cuda_visible_devices}"] if host.cuda_visible_devices else []


def container_mounts(host: Host, models_present: bool) -> list[str]:
    """``docker run`` arguments: the caches read-write, the models read-only (when the host has the directory)."""
    cache = host.host_cache_dir
    args = ["-v", f"{cache}:{cache}"]
    if models_present:
        args += ["-v", f"{host.models_dir}:{host.models_dir}:ro"]
    for assignment in [*cache_env(host), *gpu_env(host)]:
        args += ["-e", assignment]
    return args


def cache_dirs_command(host: Host) -> str:
    """Create the cache directories as the SSH user, so a container running as that uid can write them."""
    return "mkdir -p -- " + " ".join(shell.path(host.host_cache_dir, sub) for sub in CACHE_ENV.values())


def stage_on_host(transport: Connection, remote_dir: str, files: list[InputFile]) -> list[tuple[InputFile, str]]:
    """Put each file on the host unless it already holds it with the same sha256; return the workload's paths.

    On this machine the control machine's cache is the host's: its files are used where they are."""
    staged = []
    for item in files:
        if item.keep_on_host and transport.is_this_machine() and not transport.host.in_container:
            staged.append((item, str(item.source)))
            continue
        if item.keep_on_host:
            target = f"{transport.host.host_cache_dir}/{CACHE_ENV['REPROKIT_CACHE']}/inputs/{item.sha256[:16]}/{item.source.name}"
            seen = target
        else:
            rel = f"inputs/{item.param}/{item.source.name}"
            target = f"{remote_dir}/{rel}"
            seen = f"{CONTAINER_STEP_DIR}/{rel}" if transport.host.in_container else target
        if _remote_sha256(transport, target) != item.sha256:
            _upload(transport, item, target)
        staged.append((item, seen))
    return staged


def _remote_sha256(transport: Connection, path: str) -> str | None:
    code, out, _ = transport.sh(f"sha256sum -- {shell.quote(path)} 2>/dev/null", check=False)
    return out.split()[0] if code == 0 and out.split() else None


def _upload(transport: Connection, item: InputFile, target: str) -> None:
    parent, partial = target.rsplit("/", 1)[0], f"{target}.part"
    transport.sh(f"mkdir -p -- {shell.quote(parent)}")
    try:
        transport.put_file(item.source, partial)
    except OSError as exc:
        raise HostError(transport.explain(f"cannot upload {item.origin} to {target}", str(exc) or "Failure")) from None
    got = _remote_sha256(transport, partial)
    if got != item.sha256:
        transport.sh(f"rm -f -- {shell.quote(partial)}", check=False)
        raise HostError(f"host '{transport.host.name}': {item.origin} arrived at {target} with sha256"
                        f" {(got or 'none')[:12]}..., not {item.sha256[:12]}...; run again")
    transport.sh(f"mv -f -- {shell.quote(partial)} {shell.quote(target)}")
