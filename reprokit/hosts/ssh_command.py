"""Run one command on a remote host over its verified SSH connection (for image builds and the like).

Binary-safe stdin (a build context tar), output streamed line by line, a timeout that closes the channel.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping, Sequence

from reprokit.config.inventory import Host, Inventory
from reprokit.errors import HostError
from reprokit.hosts.command_target import CommandResult
from reprokit.hosts.factory import ConnectOptions, connection_for
from reprokit.hosts.pullback import MAX_PACKET_BYTES, WINDOW_BYTES
from reprokit.output.say import Say, silent


class SSHTarget:
    """A ``reprokit.hosts.command_target.CommandTarget`` over one SSH connection to ``host``, opened on first use."""

    def __init__(self, host: Host, inventory: Inventory, options: ConnectOptions, say: Say = silent):
        self.transport = connection_for(host, inventory, options, say)

    def __call__(self, argv: Sequence[str], *, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
                 timeout_s: float | None = None, on_line: Callable[[str], None] | None = None) -> CommandResult:
        if self.transport.conn is None:
            self.transport.connect()
        command = shlex.join(["env", *[f"{k}={v}" for k, v in (env or {}).items()], *argv]) if env else shlex.join(argv)
        channel = self.transport.open_session(WINDOW_BYTES, MAX_PACKET_BYTES)
        channel.set_combine_stderr(True)
        channel.settimeout(1.0)
        deadline = time.monotonic() + timeout_s if timeout_s else None
        channel.exec_command(command)
        if stdin is not None:
            channel.sendall(stdin)
        channel.shutdown_write()
        lines: list[str] = []
        pending = b""
        while True:
            if deadline and time.monotonic() > deadline:
                channel.close()  # as the local runner: a command past its time is an error, not an exit code
                raise HostError(f"host '{self.transport.host.name}': `{' '.join(argv[:2])}` did not finish within"
                                f" {timeout_s:.0f} s")
            try:
                chunk = channel.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError as exc:
                raise HostError(f"host '{self.transport.host.name}': the connection broke during `{argv[0]}`: {exc}") from None
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                line = raw.decode("utf-8", errors="replace")
                lines.append(line)
                if on_line:
                    on_line(line)
        if pending:
            lines.append(pending.decode("utf-8", errors="replace"))
        return CommandResult(channel.recv_exit_status(), "\n".join(lines))

    def close(self) -> None:
        self.transport.close()
