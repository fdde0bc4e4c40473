"""A command run to its end on this machine, its stdin fed and its output streamed (``LocalConnection.stream``).

A build is a short sequence of such commands (``docker build`` reading its context as a tar on stdin, ``docker
image inspect``, ``docker push``); the same code runs them over SSH (``ssh_command.py``). A Docker engine named by
``DOCKER_HOST`` is reached from here: the local client ships the context.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence

from reprokit.errors import HostError
from reprokit.hosts.access.base import CommandResult


def run_streamed(
    argv: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    on_line: Callable[[str], None] | None = None,
) -> CommandResult:
    """``argv`` on this machine, ``env`` added to this process's; each output line to ``on_line`` as it comes."""
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
        )
    except FileNotFoundError:
        return CommandResult(127, f"{argv[0]}: command not found")
    feeder = None
    if stdin is not None:
        feeder = threading.Thread(target=_feed, args=(proc, stdin), daemon=True)
        feeder.start()
    lines: list[str] = []
    fired = threading.Event()

    def _kill() -> None:
        fired.set()
        proc.kill()

    timer = threading.Timer(timeout_s, _kill) if timeout_s else None
    if timer:
        timer.start()
    try:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            lines.append(line)
            if on_line:
                on_line(line)
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        if timer:
            timer.cancel()
        if feeder:
            feeder.join(timeout=5)
    if fired.is_set():
        raise HostError(f"`{' '.join(argv[:2])}` did not finish within {timeout_s:.0f} s")
    return CommandResult(proc.returncode, "\n".join(lines))


def _feed(proc: subprocess.Popen, data: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the command ended early; its exit code says why


__all__ = ["run_streamed"]
