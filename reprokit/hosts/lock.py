"""A per-host lock, so two runs never share a host's GPUs.

The lock is a directory created atomically (``mkdir``) in the host's workdir,
holding ``owner.json`` (run id, control machine, pid, start time). A lock
whose owner process is gone on this control machine is reported as stale,
never silently broken: ``invoke unlock --host NAME`` removes it on purpose.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from reprokit.errors import HostError
from reprokit.records.run import pid_alive, utc_now


class LockFS(Protocol):
    """The few file operations a lock needs, on the host (local paths or over SSH)."""

    def mkdir_exclusive(self, path: str) -> bool: ...
    def write_text(self, path: str, text: str) -> None: ...
    def read_text(self, path: str) -> str | None: ...
    def remove_tree(self, path: str) -> None: ...


@dataclass
class HostLock:
    fs: LockFS
    host_name: str
    lock_dir: str
    run_id: str

    @property
    def owner_path(self) -> str:
        return f"{self.lock_dir}/owner.json"

    def owner(self) -> dict[str, Any] | None:
        text = self.fs.read_text(self.owner_path)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return {"run_id": "?", "detail": "owner.json is unreadable"}

    def acquire(self) -> None:
        if self.fs.mkdir_exclusive(self.lock_dir):
            owner = {"run_id": self.run_id, "control_host": socket.gethostname(), "pid": os.getpid(), "since": utc_now()}
            try:
                self.fs.write_text(self.owner_path, json.dumps(owner) + "\n")
            except BaseException:
                self.fs.remove_tree(self.lock_dir)  # never leave a lock without its owner
                raise
            return
        raise HostError(describe_held(self.host_name, self.owner()))

    def release(self) -> None:
        owner = self.owner()
        if owner is None or owner.get("run_id") == self.run_id:
            self.fs.remove_tree(self.lock_dir)


def is_stale(owner: dict[str, Any] | None) -> bool:
    return bool(owner and owner.get("control_host") == socket.gethostname() and isinstance(owner.get("pid"), int)
                and not pid_alive(owner["pid"]))


def describe_held(host_name: str, owner: dict[str, Any] | None) -> str:
    if owner is None:
        return f"host '{host_name}' is locked, but the lock has no owner file yet (a run is starting?); try again shortly"
    who = f"run {owner.get('run_id')} (pid {owner.get('pid')} on {owner.get('control_host')}, since {owner.get('since')})"
    if is_stale(owner):
        return (f"host '{host_name}' has a STALE lock: {who} is no longer running. If that run was detached, bring it back"
                f" with `invoke collect {owner.get('run_id')}`; otherwise remove the lock with `invoke unlock --host {host_name}`")
    return f"host '{host_name}' is busy: {who} holds its lock; wait for it to finish, or run on another host"


def break_lock(lock: HostLock, say: Callable[[str], None]) -> None:
    """Remove a lock whose owner is gone; a live owner's lock is refused."""
    owner = lock.owner()
    if owner is None:
        say(f"host '{lock.host_name}' is not locked")
        return
    if not is_stale(owner) and owner.get("control_host") == socket.gethostname():
        raise HostError(describe_held(lock.host_name, owner))
    lock.fs.remove_tree(lock.lock_dir)
    say(f"removed the lock of run {owner.get('run_id')} on host '{lock.host_name}'")
