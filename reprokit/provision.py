"""``invoke provision --host NAME [--check]``: run ansible/site.yml on one inventory host.

ansible-playbook gets the same ``inventory.yml`` as reprokit's own SSH connections and the same
known_hosts file (``.reprokit/known_hosts`` by default), with strict host key checking: a host whose
key is not there is refused, as Fabric refuses it. ``--check`` asks Ansible what would change without
changing anything. The result is read from the play recap (ok / changed / unreachable / failed per host).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.config.inventory import Host, Inventory, load_inventory
from reprokit.errors import ConfigError, ExitCode, HostError

REPO_ROOT = Path(__file__).resolve().parent.parent
ANSIBLE_DIR = REPO_ROOT / "ansible"
PLAYBOOK = ANSIBLE_DIR / "site.yml"
DEFAULT_KNOWN_HOSTS = Path(".reprokit/known_hosts")  # the file the SSH executor (reprokit.hosts.ssh) uses
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

    @property
    def changed(self) -> int:
        return self.recap.get("changed", 0)

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0 and self.recap.get("failed", 0) == 0 and self.recap.get("unreachable", 0) == 0

    def failure_messages(self) -> list[str]:
        """The ``msg`` of each failed task that was not ignored (what the roles say went wrong and what to do)."""
        messages = []
        for match in re.finditer(r"^fatal: \[[^\]]+\]: FAILED! =>(.*(?:\n[ \t]+.*)*)(\n\.\.\.ignoring)?", self.output, re.M):
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


def parse_recap(output: str, host: str) -> dict[str, int]:
    for line in output.splitlines():
        match = _RECAP.match(line.strip())
        if match and match.group("host") == host:
            return {k: int(v) for k, v in match.groupdict().items() if k != "host"}
    return {}


def _ssh_options(host: Host, known_hosts: Path, strict: str) -> list[str]:
    return ["-o", f"UserKnownHostsFile={known_hosts}", "-o", f"StrictHostKeyChecking={strict}",
            "-o", f"ConnectTimeout={int(host.connect_timeout_s)}"]


def _proxy_command(gateway: Host, inventory: Inventory, known_hosts: Path, strict: str, seen: tuple[str, ...]) -> str:
    """An ssh ProxyCommand through ``gateway`` (and its own gateways): each hop with its own key and port."""
    if gateway.name in seen:
        raise ConfigError(f"{gateway.source}: proxy_jump loop through {' -> '.join(seen + (gateway.name,))}; fix proxy_jump")
    argv = ["ssh", *_ssh_options(gateway, known_hosts, strict), "-p", str(gateway.port), "-W", "%h:%p"]
    if gateway.key_file:
        argv += ["-i", str(Path(gateway.key_file).expanduser()), "-o", "IdentitiesOnly=yes"]
    if gateway.proxy_jump:
        inner = _proxy_command(inventory.host(gateway.proxy_jump), inventory, known_hosts, strict, seen + (gateway.name,))
        argv += ["-o", f"ProxyCommand={inner}"]
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
) -> list[str]:
    """The ansible-playbook command line for one host (``--limit``), with reprokit's known_hosts and gateways."""
    strict = "accept-new" if accept_new_host_key else "yes"
    ssh_args = _ssh_options(host, known_hosts.resolve(), strict)
    if host.proxy_jump:
        ssh_args += ["-o", "ProxyCommand=" + _proxy_command(inventory.host(host.proxy_jump), inventory,
                                                           known_hosts.resolve(), strict, (host.name,))]
    argv = [ansible_playbook, "-i", str(inventory_path), "--limit", host.name, str(playbook),
            "--ssh-common-args", shlex.join(ssh_args)]
    if user:
        argv += ["--user", user]
    if extra_vars:
        argv += ["--extra-vars", json.dumps(extra_vars)]
    if check:
        argv += ["--check", "--diff"]
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
) -> ProvisionResult:
    """Run the playbook on ``host`` (``check``: only say what would change) and return its recap.

    The same known_hosts file as the SSH executor; ``accept_new_host_key`` trusts a first-seen key and saves
    it there (OpenSSH's accept-new), otherwise an unknown key is refused.
    """
    inventory_path = Path(inventory_path)
    inventory = inventory or load_inventory(inventory_path)
    if host.name == "local":
        raise ConfigError("the built-in host 'local' is not provisioned from here; add this machine to inventory.yml"
                          " under its own name with `ansible_connection: local` to provision it")
    if host.name not in inventory.hosts:
        raise ConfigError(f"host '{host.name}' is not in {inventory_path}; ansible-playbook reads its hosts from there")
    ansible_playbook = shutil.which("ansible-playbook")
    if not ansible_playbook:
        raise HostError("ansible-playbook is not installed here; install ansible-core (apt-get install ansible-core,"
                        " or pip install ansible-core)")
    known_hosts = Path(known_hosts)
    known_hosts.parent.mkdir(parents=True, exist_ok=True)
    known_hosts.touch(exist_ok=True)
    argv = ansible_command(host, inventory, inventory_path, check=check, known_hosts=known_hosts,
                           accept_new_host_key=accept_new_host_key, user=user, extra_vars=extra_vars,
                           playbook=playbook, ansible_playbook=ansible_playbook)
    # Ansible keeps SSH connections open for reuse (ControlPersist); a reused connection skips the host key check,
    # so connections are shared only between runs that trust the same known_hosts file with the same keys in it.
    trust = hashlib.sha256(str(known_hosts.resolve()).encode() + b"\0" + known_hosts.read_bytes()).hexdigest()[:12]
    env = dict(os.environ, ANSIBLE_CONFIG=str(ANSIBLE_DIR / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", PYTHONUNBUFFERED="1",
               ANSIBLE_SSH_CONTROL_PATH_DIR=str(Path.home() / ".ansible" / "cp" / f"reprokit-{trust}"))
    lines: list[str] = []
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, text=True, cwd=REPO_ROOT)
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
    return ProvisionResult(host.name, check, proc.returncode, parse_recap(output, host.name), output, argv)


def provision_cli(
    host_name: str,
    inventory_path: str,
    check: bool = False,
    known_hosts: str = str(DEFAULT_KNOWN_HOSTS),
    accept_new_host_key: bool = False,
    user: str | None = None,
    say: Callable[[str], None] = print,
) -> int:
    """What `invoke provision` does: stream Ansible's output, then one line of verdict; returns an exit code."""
    inventory = load_inventory(inventory_path)
    host = inventory.host(host_name)
    result = provision(host, check, inventory=inventory, inventory_path=inventory_path, known_hosts=known_hosts,
                       accept_new_host_key=accept_new_host_key, user=user, on_line=say)
    recap = result.recap
    mode = "would change" if check else "changed"
    if result.succeeded:
        say(f"{host.name}: provisioned{' (check mode, nothing was changed)' if check else ''}:"
            f" {recap.get('changed', 0)} task(s) {mode}, {recap.get('ok', 0)} ok, {recap.get('skipped', 0)} skipped")
        return ExitCode.PASS
    if recap.get("unreachable") or not recap:
        say(f"{host.name}: unreachable over SSH (see above); check the address, the key and {known_hosts}")
        return ExitCode.HOST_ERROR
    for message in result.failure_messages():
        say(f"{host.name}: {message}")
    say(f"{host.name}: provisioning failed ({recap.get('failed', 0)} task(s) failed); the messages above say what to do")
    return ExitCode.FAIL
