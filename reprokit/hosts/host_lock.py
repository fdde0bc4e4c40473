"""A per-host lock, so two runs never share a host's GPUs.

The lock is a directory created atomically (``mkdir``) in the host's workdir,
holding ``owner.json`` (run id, control machine, pid, start time). A lock
whose owner process is gone on this control machine is reported as stale,
never silently broken: ``invoke unlock --host NAME`` removes it on purpose.
A lock directory left without its owner file (a crash between ``mkdir`` and
the write) is "starting" for OWNERLESS_STALE_S, then stale. A live lock of
another control machine cannot be judged from here: ``unlock`` refuses it
unless ``--force``.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from reprokit.errors import HostError
from reprokit.records.run_dir import pid_alive, utc_now

OWNERLESS_STALE_S = 60.0  # writing owner.json takes milliseconds; a lock without one for this long is left over


class LockFS(Protocol):
    """The few file operations a lock needs, on the host (local paths or over SSH)."""

    def mkdir_exclusive(self, path: str) -> bool: ...
    def write_text(self, path: str, text: str) -> None: ...
    def read_text(self, path: str) -> str | None: ...
    def remove_tree(self, path: str) -> None: ...
    def age_s(self, path: str) -> float | None: ...


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
        owner = self.owner()
        age_s = self.ownerless_age_s() if owner is None else None
        if age_s is not None and age_s >= OWNERLESS_STALE_S:
            raise HostError(f"host '{self.host_name}' has a STALE lock: {self.lock_dir} has had no owner file for"
                            f" {OWNERLESS_STALE_S:.0f} s or more (a run crashed while taking it); remove it with"
                            f" `invoke unlock --host {self.host_name}`")
        raise HostError(describe_held(self.host_name, owner))

    def ownerless_age_s(self) -> float | None:
        """How long the lock directory has existed without an owner file (None: no lock directory).

        A directory dated in the future (the host's clock stepped back since) counts by how far: it cannot be a
        run taking the lock now, and must become stale like any other, not never.
        """
        age_s = self.fs.age_s(self.lock_dir)
        return None if age_s is None else abs(age_s)

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


def break_lock(lock: HostLock, say: Callable[[str], None], force: bool = False) -> None:
    """Remove a lock whose owner is gone. A live owner's lock here is refused; another machine's needs ``force``."""
    owner = lock.owner()
    if owner is None:
        age_s = lock.ownerless_age_s()
        if age_s is None:
            say(f"host '{lock.host_name}' is not locked")
            return
        if age_s < OWNERLESS_STALE_S and not force:
            raise HostError(f"host '{lock.host_name}' is being locked right now ({lock.lock_dir} has no owner file yet,"
                            f" {age_s:.0f} s old); try again in a minute, or pass --force")
        lock.fs.remove_tree(lock.lock_dir)
        say(f"removed the lock without an owner on host '{lock.host_name}'")
        return
    here = owner.get("control_host") == socket.gethostname()
    if here and not is_stale(owner):
        raise HostError(describe_held(lock.host_name, owner))
    if not here and not force:
        raise HostError(f"host '{lock.host_name}' is locked by run {owner.get('run_id')} of another control machine"
                        f" ({owner.get('control_host')}, pid {owner.get('pid')}, since {owner.get('since')}); whether it"
                        " still runs cannot be seen from here: check there, then `invoke unlock --force`")
    lock.fs.remove_tree(lock.lock_dir)
    say(f"removed the lock of run {owner.get('run_id')} on host '{lock.host_name}'")
