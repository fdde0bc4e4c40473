"""SSH connections from the inventory, with host keys verified.

``SSHSettings`` is the one configuration of a connection (target, gateway chain, users, keys, known_hosts,
timeouts); the Paramiko control connection and the OpenSSH client of the bulk copies are both built from it.
Fabric's ``Connection`` sets paramiko's ``AutoAddPolicy`` and never loads a
known_hosts file: it trusts any server. Here every connection (gateways too)
loads the kit's known_hosts file and rejects unknown or changed keys. Trust on
first use is explicit (``accept_new_host_key``): the new key is appended to
the file. Only transient connection errors are retried, with backoff.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko
from fabric import Config, Connection
from paramiko.config import SSHConfig

from reprokit.config.inventory import Host, Inventory
from reprokit.errors import ConfigError, HostError
from reprokit.hosts import shell
from reprokit.hosts.known_hosts import check_known_hosts
from reprokit.hosts.retry import Retry

DEFAULT_KNOWN_HOSTS = Path(".reprokit/known_hosts")
KEEPALIVE_S = 15
MAX_KEY_FILE_BYTES = 64 << 10  # an OpenSSH RSA-16384 key is ~12 KiB
CONNECT_RETRIES = 3
BULK_KEEPALIVE_S = 5  # the OpenSSH bulk path: a silent link ends after BULK_KEEPALIVE_S x 3
_known_hosts_lock = threading.Lock()


def fingerprint_of(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.fingerprint}"


class AcceptNewHostKey(paramiko.MissingHostKeyPolicy):
    """Trust on first use, as OpenSSH's ``StrictHostKeyChecking=accept-new``: new keys are saved; changed keys still fail."""

    def __init__(self, known_hosts: Path, say=None):
        self.known_hosts = known_hosts
        self.say = say

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        with _known_hosts_lock:
            client.get_host_keys().add(hostname, key.get_name(), key)
            with open(self.known_hosts, "a", encoding="utf-8") as fh:
                fh.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
        if self.say:
            self.say(f"warning: added the host key of {hostname} ({fingerprint_of(key)}) to {self.known_hosts}")  # quiet too


class HostKeyUnknown(HostError):
    pass


class HostKeyChanged(HostError):
    pass


def ensure_known_hosts(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.touch(mode=0o644)


def _secure(conn: Connection, known_hosts: Path, accept_new: bool, say, also_known: tuple[str, ...] = ()) -> None:
    client = conn.client
    for path in (*also_known, known_hosts):
        check_known_hosts(path)  # one line for any malformed form, before paramiko reads it
    for path in also_known:  # the SSH config's UserKnownHostsFile: trusted, never written
        if Path(path).is_file():
            client.load_system_host_keys(path)
    client.load_host_keys(str(known_hosts))
    if accept_new:
        client.set_missing_host_key_policy(AcceptNewHostKey(known_hosts, say))
    else:
        client.set_missing_host_key_policy(paramiko.RejectPolicy())


@dataclass(frozen=True)
class Hop:
    """One SSH endpoint (the target or a gateway) as both clients see it."""

    name: str
    address: str
    port: int
    user: str | None
    key_file: str | None  # expanded
    trusted_known_hosts: tuple[str, ...]  # the SSH config's UserKnownHostsFile: read, never written
    connect_timeout_s: float

    @classmethod
    def of(cls, host: Host) -> Hop:
        if host.is_local:
            raise HostError(f"host '{host.name}' is local; it needs no SSH connection")
        if host.connection != "ssh":
            raise HostError(f"{host.source}: host '{host.name}' has ansible_connection={host.connection}; reprokit runs"
                            " kits over ssh or on the local machine only (Ansible can still provision it)")
        key_file = str(Path(host.key_file).expanduser()) if host.key_file else None
        if key_file:
            check_key_file(key_file, f"{host.source}: host '{host.name}': ansible_ssh_private_key_file {key_file}")
        return cls(host.name, str(host.address), host.port, host.user, key_file, host.known_hosts_files,
                   host.connect_timeout_s)


def check_key_file(path: str, where: str) -> None:
    """A private key is a regular, readable text file under 64 KiB, or bad input (exit 2) in one line.

    Paramiko read ``/dev/zero`` until the control process held 5.5 GB, blocked on a FIFO for ever, and called a
    directory or a binary file a connection failure. The file is opened without blocking and read only up to the
    cap. A file that does not exist is left to the SSH client (it may come from an agent's config). A symbolic link
    (a dotfile manager's, a Kubernetes secret volume's ``id -> ..data/id``) is followed to the file it names, and
    that file is checked and read; what is opened is checked again, so a swap in between reads nothing else.
    """
    path = os.path.realpath(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the key ({exc.strerror}); give a private key file") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{where}: not a regular file (a directory, FIFO or device?); give a private key file")
    if info.st_size >= MAX_KEY_FILE_BYTES:
        raise ConfigError(f"{where}: {info.st_size} bytes is too big for a private key (at most"
                          f" {MAX_KEY_FILE_BYTES >> 10} KiB); give a private key file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the key ({exc.strerror}); give a readable private key file") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ConfigError(f"{where}: not a regular file (a directory, FIFO or device?); give a private key file")
        head = fh.read(MAX_KEY_FILE_BYTES)
    try:
        head.decode("ascii")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not a private key (binary data at byte {exc.start}); give an OpenSSH or PEM private"
                          " key file") from None


@dataclass(frozen=True)
class SSHSettings:
    """The one configuration of a connection to a host: the Paramiko control connection and the OpenSSH bulk
    copy are both built from it (``fabric_connection``, ``openssh_argv``), so they cannot disagree."""

    target: Hop
    gateways: tuple[Hop, ...]  # the nearest first, as ``Inventory.gateways`` walks them
    known_hosts: Path  # reprokit's file: checked, written only under --accept-new-host-key

    @classmethod
    def for_host(cls, host: Host, inventory: Inventory, known_hosts: Path = DEFAULT_KNOWN_HOSTS) -> SSHSettings:
        """``host`` (its SSH config already applied, ``ssh_config.resolve``) and its ``proxy_jump`` chain."""
        gateways = tuple(Hop.of(hop) for hop in reversed(inventory.gateways(host)))[::-1]  # checked farthest first
        return cls(Hop.of(host), gateways, known_hosts)


def connection_for(
    host: Host,
    inventory: Inventory,
    known_hosts: Path = DEFAULT_KNOWN_HOSTS,
    accept_new_host_key: bool = False,
    say=None,
) -> Connection:
    """A Fabric connection to ``host`` (through its ``proxy_jump`` chain), not yet opened."""
    return fabric_connection(SSHSettings.for_host(host, inventory, known_hosts), accept_new_host_key, say)


def fabric_connection(settings: SSHSettings, accept_new_host_key: bool = False, say=None) -> Connection:
    """The Paramiko control connection of ``settings``, not yet opened; every hop's host key is verified."""
    gateway = None
    for hop in reversed(settings.gateways):  # the farthest gateway first: each is reached through the next
        gateway = _connection(hop, gateway, settings.known_hosts, accept_new_host_key, say)
    return _connection(settings.target, gateway, settings.known_hosts, accept_new_host_key, say)


def _connection(hop: Hop, gateway: Connection | None, known_hosts: Path, accept_new_host_key: bool, say) -> Connection:
    ensure_known_hosts(known_hosts)
    connect_kwargs: dict = {"banner_timeout": hop.connect_timeout_s, "auth_timeout": hop.connect_timeout_s}
    if hop.key_file:
        connect_kwargs.update(key_filename=[hop.key_file], look_for_keys=False)
    conn = Connection(
        host=hop.address,
        user=hop.user,
        port=hop.port,
        connect_timeout=hop.connect_timeout_s,
        connect_kwargs=connect_kwargs,
        gateway=gateway if gateway is not None else False,
        # Empty for Fabric: the operator's SSH config is already applied to the host (reprokit.hosts.ssh_config), and
        # Fabric's own ProxyJump gateways would skip the host key checks.
        config=Config(ssh_config=SSHConfig()),
    )
    _secure(conn, known_hosts, accept_new_host_key, say, hop.trusted_known_hosts)
    conn.reprokit_hop = hop  # type: ignore[attr-defined]
    conn.reprokit_known_hosts = known_hosts  # type: ignore[attr-defined]
    return conn


def openssh_argv(settings: SSHSettings) -> list[str] | None:
    """The OpenSSH client's argv for ``settings`` (the same key, user, port, known_hosts and gateways), if installed.

    Bulk transfers go through it: paramiko's pure-Python packet handling moves a fraction of what OpenSSH does.
    The command to run follows the returned argv.
    """
    ssh = shutil.which("ssh")
    if ssh is None:
        return None

    def hop_args(hop: Hop, gateways: tuple[Hop, ...]) -> list[str]:
        known = " ".join([str(settings.known_hosts.resolve()), *hop.trusted_known_hosts])
        args = ["-F", "/dev/null", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={known}",
                "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes",
                "-o", f"ConnectTimeout={int(hop.connect_timeout_s)}", "-o", f"ServerAliveInterval={BULK_KEEPALIVE_S}",
                "-o", "ServerAliveCountMax=3", "-p", str(hop.port)]
        if hop.key_file:
            args += ["-i", hop.key_file, "-o", "IdentitiesOnly=yes"]
        if hop.user:
            args += ["-l", hop.user]
        if gateways:
            gateway, behind = gateways[0], gateways[1:]
            # this hop's client expands every %-token of its ProxyCommand, the nested ones too: those are
            # escaped (%% -> %), so that each gateway's own client expands its own -W %h:%p
            nested = [arg.replace("%", "%%") for arg in hop_args(gateway, behind)]
            proxy = shell.join([ssh, *nested, "-W", "%h:%p", gateway.address])
            args += ["-o", f"ProxyCommand={proxy}"]
        return args

    return [ssh, *hop_args(settings.target, settings.gateways), "--", settings.target.address]


TRANSIENT = (socket.timeout, TimeoutError, ConnectionError, EOFError, paramiko.ssh_exception.NoValidConnectionsError)


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (paramiko.BadHostKeyException, paramiko.AuthenticationException)):
        return False
    if isinstance(exc, TRANSIENT):
        return True
    if isinstance(exc, paramiko.SSHException):
        text = str(exc)
        return "Error reading SSH protocol banner" in text or "No existing session" in text or "timed out" in text
    return isinstance(exc, OSError)


def connect_policy(attempts: int = CONNECT_RETRIES) -> Retry:
    """Opening a connection: 1 s, 2 s, 4 s ... between attempts; host-key and authentication failures at once."""
    return Retry(attempts=attempts, transient=is_transient, first_delay_s=1.0)


def is_dropped_link(exc: BaseException) -> bool:
    """A connection that broke under a running command (not a refusal): worth reconnecting for."""
    return is_transient(exc) or isinstance(exc, (EOFError, paramiko.SSHException))


def describe_failure(host: Hop, exc: BaseException, known_hosts: Path) -> HostError:
    where = f"host '{host.name}' ({host.address}:{host.port})"
    if isinstance(exc, paramiko.BadHostKeyException):
        return HostKeyChanged(
            f"{where}: HOST KEY CHANGED: {known_hosts} has {fingerprint_of(exc.expected_key)}, the server offered"
            f" {fingerprint_of(exc.key)}. This can be an attack; if the host was reinstalled, delete its line in"
            f" {known_hosts} and connect once with --accept-new-host-key"
        )
    if isinstance(exc, paramiko.SSHException) and "not found in known_hosts" in str(exc):
        return HostKeyUnknown(
            f"{where}: its host key is not in {known_hosts}; add the key there (ssh-keyscan, verified out of band)"
            " or connect once with --accept-new-host-key (trust on first use)"
        )
    if isinstance(exc, paramiko.AuthenticationException):
        return HostError(f"{where}: SSH authentication failed for user '{host.user}' ({exc}); check ansible_user and ansible_ssh_private_key_file")
    return HostError(f"{where}: cannot connect ({connect_problem(exc)}); {connect_hint(host, exc)}")


def connect_problem(exc: BaseException) -> str:
    """What went wrong, in words: Paramiko's exception class names mean nothing to the person at the terminal."""
    text = str(exc).strip() or "connection failed"
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
        return "nothing answered on that port: refused or unreachable"
    if isinstance(exc, paramiko.SSHException) and "protocol banner" in text:
        return "something answered, but not an SSH server"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "no answer in time"
    return text


def connect_hint(host: Hop, exc: BaseException) -> str:
    """The next thing to try, as a command: the same connection by hand shows what OpenSSH makes of it."""
    user = f"{host.user}@" if host.user else ""
    by_hand = f"`ssh -p {host.port} {user}{host.address}`"
    if isinstance(exc, paramiko.SSHException) and "protocol banner" in str(exc):
        return f"check the port (ansible_port) in the inventory; try {by_hand}"
    return f"check the address and port (ansible_host, ansible_port) in the inventory; try {by_hand}"


def open_connection(conn: Connection, retries: int = CONNECT_RETRIES, say=None) -> Connection:
    """Open with retries for transient errors only; host-key and auth failures fail at once, clearly."""
    host: Hop = conn.reprokit_hop  # type: ignore[attr-defined]
    known_hosts: Path = conn.reprokit_known_hosts  # type: ignore[attr-defined]

    def open_once(_: int) -> Connection:
        conn.open()
        conn.transport.set_keepalive(KEEPALIVE_S)
        return conn

    def before_retry(exc: BaseException, delay_s: float) -> None:
        if say:
            say(f"      connection to {host.name} failed ({connect_problem(exc)}); retrying in {delay_s:.0f} s")
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - closing what did not open
            pass

    try:
        return connect_policy(retries).run(open_once, before_retry)
    except Exception as exc:  # noqa: BLE001 - classified below
        error = exc
    failing_host = host
    gateway = conn.gateway
    while isinstance(error, (paramiko.BadHostKeyException, paramiko.SSHException)) and gateway and not gateway.is_connected:
        failing_host = gateway.reprokit_hop  # the gateway refused us before the target was reached
        gateway = gateway.gateway
    raise describe_failure(failing_host, error, known_hosts) from None
