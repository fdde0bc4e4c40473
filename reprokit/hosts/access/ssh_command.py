"""A command run to its end on an SSH host over the verified connection (``SSHConnection.stream``).

Binary-safe stdin (a build context tar), output streamed line by line, a timeout that closes the channel. Never
retried: a build, a push must not run twice; a connection that breaks under it is the command's error.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping, Sequence

from reprokit.errors import HostError
from reprokit.hosts.access.base import CommandResult
from reprokit.hosts.pullback import MAX_PACKET_BYTES, WINDOW_BYTES
from reprokit.hosts.transport import Transport


def stream_over_ssh(transport: Transport, argv: Sequence[str], *, stdin: bytes | None = None,
                    env: Mapping[str, str] | None = None, timeout_s: float | None = None,
                    on_line: Callable[[str], None] | None = None) -> CommandResult:
    """``argv`` on ``transport``'s host (opened on first use), ``env`` added through ``env``; its lines as they come."""
    if transport.conn is None:
        transport.connect()
    command = shlex.join(["env", *[f"{k}={v}" for k, v in (env or {}).items()], *argv]) if env else shlex.join(argv)
    channel = transport.open_session(WINDOW_BYTES, MAX_PACKET_BYTES)
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
            channel.close()  # as on this machine: a command past its time is an error, not an exit code
            raise HostError(f"host '{transport.host.name}': `{' '.join(argv[:2])}` did not finish within"
                            f" {timeout_s:.0f} s")
        try:
            chunk = channel.recv(1 << 16)
        except TimeoutError:
            continue
        except OSError as exc:
            raise HostError(f"host '{transport.host.name}': the connection broke during `{argv[0]}`: {exc}") from None
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


__all__ = ["stream_over_ssh"]
