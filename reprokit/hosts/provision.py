"""``invoke provision --host NAME | --group NAME | --limit PATTERN``: run ansible/site.yml on inventory hosts.

ansible-playbook gets the same ``inventory.yml`` as reprokit's own SSH connections and the same
known_hosts file (``.reprokit/known_hosts`` by default), with strict host key checking: a host whose
key is not there is refused, as Fabric refuses it. ``--check`` asks Ansible what would change without
changing anything; ``--diff``, ``--tags``, ``--skip-tags`` and ``--extra-vars`` go to ansible-playbook as they are.
The result is read from the play recap (ok / changed / unreachable / failed per host).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.config import ansible_inventory, layers
from reprokit.config.inventory import LOCAL_HOST, Host, Inventory
from reprokit.errors import ConfigError, HostError
from reprokit.hosts.axes import load_inventory
from reprokit.hosts.factory import ConnectOptions, connection_for
from reprokit.hosts.ssh import DEFAULT_KNOWN_HOSTS  # the file the SSH executor uses

ANSIBLE_DIR = layers.ansible_dir()  # the checkout's ansible/, or the installed package's copy
PLAYBOOK = ANSIBLE_DIR / "site.yml"
_RECAP = re.compile(
    r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+"
    r"failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)\s+rescued=(?P<rescued>\d+)\s+ignored=(?P<ignored>\d+)"
)


@dataclass
class ProvisionResult:
    host: str
    check: bool
    returncode: int
    recap: dict[str, int] = field(default_factory=dict)  # ok, changed, unreachable, failed, skipped, rescued, ignored
    output: str = ""
    command: list[str] = field(default_factory=list)
    recaps: dict[str, dict[str, int]] = field(default_factory=dict)  # every host of the play recap (--group, --limit)

    @property
    def changed(self) -> int:
        return self.recap.get("changed", 0)

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0 and self.recap.get("failed", 0) == 0 and self.recap.get("unreachable", 0) == 0

    def failure_messages(self, host: str | None = None) -> list[str]:
        """The ``msg`` of each failed task that was not ignored (what the roles say went wrong and what to do)."""
        messages = []
        name = re.escape(host) if host else r"[^\]]+"
        for match in re.finditer(r"^fatal: \[" + name + r"\]: FAILED! =>(.*(?:\n[ \t]+.*)*)(\n\.\.\.ignoring)?", self.output, re.M):
            if match.group(2):
                continue
            text = match.group(1).strip()
            try:
                messages.append(str(json.loads(text).get("msg", text)))
                continue
            except ValueError:
                pass
            msg = re.search(r"^msg: (.*(?:\n[ \t]{2,}.*)*)", textwrap.dedent(match.group(1).strip("\n")), re.M)
            messages.append(" ".join(msg.group(1).strip("'\"").split()) if msg else text)
        return messages


def parse_recaps(output: str) -> dict[str, dict[str, int]]:
    recaps = {}
    for line in output.splitlines():
        match = _RECAP.match(line.strip())
        if match:
            recaps[match.group("host")] = {k: int(v) for k, v in match.groupdict().items() if k != "host"}
    return recaps


def parse_recap(output: str, host: str) -> dict[str, int]:
    return parse_recaps(output).get(host, {})


def _ssh_options(host: Host, known_hosts: Path, strict: str, ssh_config: str | None = None) -> list[str]:
    config = ["-F", "/dev/null" if ssh_config == "none" else str(Path(ssh_config).expanduser())] if ssh_config else []
    return [*config, "-o", f"UserKnownHostsFile={known_hosts}", "-o", f"StrictHostKeyChecking={strict}",
            "-o", f"ConnectTimeout={int(host.connect_timeout_s)}"]


def _proxy_command(gateways: tuple[Host, ...], known_hosts: Path, strict: str, ssh_config: str | None = None) -> str:
    """An ssh ProxyCommand through ``gateways`` (the nearest first, as ``Inventory.gateways`` walks them): each hop
    with its own key and port, reached through the hops behind it."""
    gateway, behind = gateways[0], gateways[1:]
    argv = ["ssh", *_ssh_options(gateway, known_hosts, strict, ssh_config), "-p", str(gateway.port), "-W", "%h:%p"]
    if gateway.key_file:
        argv += ["-i", str(Path(gateway.key_file).expanduser()), "-o", "IdentitiesOnly=yes"]
    if behind:
        # the client running this command expands every %-token in it, the nested ProxyCommand's too: escaped, so that
        # each gateway's own client expands its own -W %h:%p (hosts/ssh.py's openssh_argv does the same)
        nested = _proxy_command(behind, known_hosts, strict, ssh_config).replace("%", "%%")
        argv += ["-o", f"ProxyCommand={nested}"]
    argv.append(f"{gateway.user}@{gateway.address}" if gateway.user else str(gateway.address))
    return shlex.join(argv)


def ansible_command(
    host: Host,
    inventory: Inventory,
    inventory_path: Path,
    *,
    check: bool,
    known_hosts: Path = DEFAULT_KNOWN_HOSTS,
    accept_new_host_key: bool = False,
    user: str | None = None,
    extra_vars: dict | None = None,
    playbook: Path = PLAYBOOK,
    ansible_playbook: str = "ansible-playbook",
    limit: str | None = None,
    diff: bool = False,
    tags: list[str] | None = None,
    skip_tags: list[str] | None = None,
    extra_args: list[str] | None = None,
    ssh_config: str | None = None,
) -> list[str]:
    """The ansible-playbook command line for ``host`` (or the hosts ``limit`` names, all with ``host``'s gateways),
    with reprokit's known_hosts; ``extra_args`` are --extra-vars as the user wrote them (KEY=VALUE, JSON, @FILE)."""
    strict = "accept-new" if accept_new_host_key else "yes"
    ssh_args = _ssh_options(host, known_hosts.resolve(), strict, ssh_config)
    if gateways := inventory.gateways(host):
        ssh_args += ["-o", "ProxyCommand=" + _proxy_command(gateways, known_hosts.resolve(), strict, ssh_config)]
    argv = [ansible_playbook, "-i", str(inventory_path), "--limit", limit or host.name, str(playbook),
            "--ssh-common-args", shlex.join(ssh_args)]
    if user:
        argv += ["--user", user]
    if extra_vars:
        argv += ["--extra-vars", json.dumps(extra_vars)]
    for value in extra_args or []:
        argv += ["--extra-vars", value]
    if tags:
        argv += ["--tags", ",".join(tags)]
    if skip_tags:
        argv += ["--skip-tags", ",".join(skip_tags)]
    if check:
        argv.append("--check")
    if diff:
        argv.append("--diff")
    return argv


def provision(
    host: Host,
    check: bool,
    *,
    inventory: Inventory | None = None,
    inventory_path: Path | str = "inventory.yml",
    known_hosts: Path | str = DEFAULT_KNOWN_HOSTS,
    accept_new_host_key: bool = False,
    user: str | None = None,
    extra_vars: dict | None = None,
    playbook: Path = PLAYBOOK,
    on_line: Callable[[str], None] | None = None,
    timeout_s: float = 3600,
    **flags,
) -> ProvisionResult:
    """Run the playbook on ``host`` (``check``: only say what would change) and return its recap.

    The same known_hosts file as the SSH executor; ``accept_new_host_key`` trusts a first-seen key and saves
    it there (OpenSSH's accept-new), otherwise an unknown key is refused. ``flags``: limit, diff, tags,
    skip_tags, extra_args, ssh_config (see ``ansible_command``).
    """
    inventory_path = Path(inventory_path)
    inventory = inventory or load_inventory(inventory_path)
    if host.name == LOCAL_HOST:
        raise ConfigError("the built-in host 'local' is not provisioned from here; add this machine to inventory.yml"
                          " under its own name with `ansible_connection: local` to provision it")
    if host.name not in inventory.hosts:
        raise ConfigError(f"host '{host.name}' is not in {inventory_path}; ansible-playbook reads its hosts from there")
    ansible_playbook = ansible_inventory.tool("ansible-playbook")
    if not ansible_playbook:
        raise HostError("ansible-playbook is not installed here; reinstall reprokit (it depends on ansible-core)")
    known_hosts = Path(known_hosts)
    known_hosts.parent.mkdir(parents=True, exist_ok=True)
    known_hosts.touch(exist_ok=True)
    argv = ansible_command(host, inventory, inventory_path.resolve(), check=check, known_hosts=known_hosts,
                           accept_new_host_key=accept_new_host_key, user=user, extra_vars=extra_vars,
                           playbook=playbook, ansible_playbook=ansible_playbook, **flags)
    # Ansible keeps SSH connections open for reuse (ControlPersist); a reused connection skips the host key check,
    # so connections are shared only between runs that trust the same known_hosts file with the same keys in it.
    trust = hashlib.sha256(str(known_hosts.resolve()).encode() + b"\0" + known_hosts.read_bytes()).hexdigest()[:12]
    env = dict(os.environ, ANSIBLE_CONFIG=str(ANSIBLE_DIR / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", PYTHONUNBUFFERED="1",
               ANSIBLE_SSH_CONTROL_PATH_DIR=str(Path.home() / ".ansible" / "cp" / f"reprokit-{trust}"))
    lines: list[str] = []
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, text=True, cwd=ANSIBLE_DIR.parent)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if on_line:
                on_line(line.rstrip("\n"))
        proc.wait(timeout=timeout_s)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    output = "\n".join(lines)
    recaps = parse_recaps(output)
    return ProvisionResult(host.name, check, proc.returncode, recaps.get(host.name, {}), output, argv, recaps)


def target_hosts(inventory: Inventory, host_name: str | None, group: str | None, limit: str | None,
                 inventory_path: str) -> list[Host]:
    """The hosts one of --host, --group or --limit names; a --limit pattern is matched by Ansible itself."""
    given = [flag for flag, value in (("--host", host_name), ("--group", group), ("--limit", limit)) if value]
    if len(given) != 1:
        raise ConfigError("give one of --host NAME, --group NAME or --limit PATTERN" + (f" (got {', '.join(given)})" if given else ""))
    if host_name:
        return [inventory.host(host_name)]
    if group:
        return [h for h in inventory.group(group) if not h.is_local]
    return [inventory.host(name) for name in ansible_inventory.match(Path(inventory_path), limit)]



def runs_by_gateway(targets: list[Host]) -> list[list[Host]]:
    """The targets in one ansible-playbook run per gateway (the gateway is in a run's SSH arguments)."""
    runs: dict[str | None, list[Host]] = {}
    for host in targets:
        runs.setdefault(host.proxy_jump, []).append(host)
    return list(runs.values())


SLURM_TOOLS = ("sbatch", "squeue", "scancel", "scontrol", "sinfo")
NOT_TOUCHED = ("will not touch: the compute nodes, their drivers, container tools and the Slurm configuration belong to"
               " the cluster's admins; provision installs nothing on a Slurm host")


def check_slurm_host(host: Host, inventory: Inventory, options: ConnectOptions) -> tuple[bool, list[str]]:
    """``invoke provision`` on a Slurm host: check its login node over SSH (tools, partition, GPUs, workdir), change nothing.

    The connection is the control plane's own (strict host keys, ProxyJump, the SSH config), as for a run.
    """
    transport = connection_for(host, inventory, options)
    transport.connect()
    lines, ok = [], True
    try:
        code, out, _ = transport.sh("for t in " + " ".join(SLURM_TOOLS) + "; do command -v $t >/dev/null || echo $t;"
                                    " done", check=False)
        missing = out.split()
        ok &= not missing
        lines.append(f"{'missing' if missing else 'ok'}: Slurm tools on the login node"
                     + (f": {', '.join(missing)} not found; ask the admins, or name the login node" if missing else
                        f" ({', '.join(SLURM_TOOLS)})"))
        partition = host.slurm.partition if host.slurm else None
        where = f" -p {shlex.quote(partition)}" if partition else ""
        code, out, err = transport.sh(f"sinfo -h{where} -o '%P|%a|%D|%G'", check=False)
        rows = [line.split("|") for line in out.split() if line.count("|") == 3]
        if code != 0 or not rows:
            ok = False
            lines.append(f"failed: sinfo{where} lists no partition: {(err.strip() or 'no output').splitlines()[-1]}")
        for name, avail, count, gres in rows:
            gpus = [g for g in gres.split(",") if g.startswith("gpu")]
            ok &= avail == "up"
            lines.append(f"{'ok' if avail == 'up' and gpus else 'warning' if avail == 'up' else 'failed'}: partition"
                         f" {name} is {avail}, {count} node(s), GPUs: {', '.join(gpus) or 'none declared (no gpu GRES)'}")
        code, _, err = transport.sh(f"mkdir -p -- {shlex.quote(host.workdir)} && test -w {shlex.quote(host.workdir)}",
                                    check=False)
        ok &= code == 0
        lines.append(f"{'ok' if code == 0 else 'failed'}: workdir {host.workdir} on the shared file system"
                     + ("" if code == 0 else f" is not writable: {err.strip() or 'no output'}"))
    finally:
        transport.close()
    return ok, [*lines, NOT_TOUCHED]
