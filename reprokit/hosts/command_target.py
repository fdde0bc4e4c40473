"""How a command reaches a host: a function that runs it there (image builds are the first user).

A build is a short sequence of commands (``docker build`` reading its context as a tar on stdin, ``docker
image inspect``, ``docker push``), so the same code builds on this machine (``LocalTarget``), on a Docker
engine named by ``DOCKER_HOST`` (the local client ships the context), or on a remote host through any
function with this signature, e.g. one that runs the command over an SSH connection.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from reprokit.errors import HostError


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    output: str  # stdout and stderr together, as the command printed them

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


class CommandTarget(Protocol):
    def __call__(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> CommandResult:
        """Run ``argv`` on the host with ``env`` added to its environment and ``stdin`` fed to it."""
        ...


class LocalTarget:
    """Runs commands on this machine; streams each output line to ``on_line`` as it comes."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> CommandResult:
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
