"""Bring a step's files back from a host, trusting nothing the host sends.

The host lists the step directory as JSON lines (``hostside.py``), so no file name can forge an entry.
Every listed path is checked here before anything is opened or written: relative, no ``..``, no control
characters, UTF-8, and its local target must resolve inside the step's local directory. Files are read on
the host component by component with ``O_NOFOLLOW`` and only while they are the regular file the listing
saw, so a link swapped in later reads nothing. What cannot be pulled (links, FIFOs, devices, unreadable or
oddly named files) is reported, never dropped silently, and the host keeps its copy.

Before writing, the control machine's free space and the run's byte cap are checked; a full disk is its
own error. Any of these stops the pull with ``PullStopped``: the host's copy stays for ``invoke collect``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import posixpath
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.hosts import hostside, shell
from reprokit.hosts.pull_listing import (
    BufferedStream,
    Listing,
    ProtocolViolation,
    PullStats,
    PullStopped,
    RemoteFile,
    RemoteRefused,
    batches,
    local_target,
    parse_listing,
    partial_path,
    too_long_here,
    unsafe_reason,
    withhold_secret_names,
)
from reprokit.hosts.retry import Retry
from reprokit.hosts.transport import LINK_ERRORS, Transport
from reprokit.output.hosttext import shown
from reprokit.output.secrets import Redactor
from reprokit.records.atomic import unwritable
from reprokit.records.digests import DIGESTS

CHUNK_BYTES = 1 << 20
WINDOW_BYTES = 64 << 20
SMALL_FILE_BYTES = 256 << 10  # below: held whole, many per reader; at or above: streamed, all through one OpenSSH client
MAX_PACKET_BYTES = 32768
PIPE_BYTES = 1 << 20  # the OpenSSH client's pipe to us (Linux's default, 64 KiB, stalls it at every hash)
PULL_REPORT_BYTES = 1 << 20  # pull-backs above this size get a progress bar (on a terminal) and a summary line
MAX_PULL_BYTES = 64 << 30  # default cap on what one run may bring back (ConnectOptions.max_pull_bytes)
MAX_PULL_FILES = 100_000  # default cap on the entries one run may list and bring back (ConnectOptions.max_pull_files)
DEADLINE_FLOOR_S = 120.0  # every pull-back may take this long, whatever its size
DEADLINE_MIN_BYTES_PER_S = 2 << 20  # ... plus its bytes at this pace: a host that trickles is cut off
EXIT_WAIT_S = 10.0  # after the data, the host's reader has this long to end
FREE_SPACE_RESERVE_BYTES = 64 << 20  # left free on the control machine after a pull
MAX_LISTING_BYTES = 64 << 20  # a host that lists more than this is refused
MAX_STDERR_BYTES = 64 << 10  # what is kept of the host-side reader's standard error
HOSTSIDE_SOURCE = Path(hostside.__file__).read_bytes()


@contextlib.contextmanager
def _no_progress():
    yield lambda n: None


@dataclass
class PullBack:
    """Brings steps' files back over ``transport`` (its channels, or the OpenSSH client of the same settings)."""

    transport: Transport
    max_pull_bytes: int = MAX_PULL_BYTES  # what one run may bring back in all
    progress: Callable[[str, int], Any] = field(default=lambda description, total: _no_progress())
    redactor: Redactor = field(default_factory=Redactor)
    pull_stats: PullStats = field(default_factory=PullStats)
    run_pulled_bytes: int = 0
    check_stop: Callable[[], None] = lambda: None  # raises KeyboardInterrupt when the run is told to stop
    max_pull_files: int = MAX_PULL_FILES  # what one run may list and bring back, in entries
    run_pulled_files: int = 0
    deadline: float = float("inf")  # time.monotonic() by which the pull-back under way must end

    def _check_deadline(self, what: str) -> float:
        """Seconds left before the pull-back's deadline (at most the idle timeout); past it, the pull stops."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise PullStopped(f"host '{self.transport.host.name}': {what} passed its deadline (its bytes at"
                              f" {DEADLINE_MIN_BYTES_PER_S >> 20} MiB/s plus {DEADLINE_FLOOR_S:.0f} s); the files stay on the host")
        return min(left, self.transport.io_timeout_s)

    def hostside_command(self, *args: object) -> str:
        return shell.join([self.transport.host.python, "-", *args])

    def list_remote(self, remote_dir: str) -> Listing:
        """The host's listing of ``remote_dir``, checked entry by entry."""
        status: dict[str, Any] = {}
        chunks, size, entries = [], 0, 0
        room = self.max_pull_files - self.run_pulled_files
        for chunk in self._channel_source(self.hostside_command("list", remote_dir), status):
            size += len(chunk)
            entries += chunk.count(b"\n")
            if size > MAX_LISTING_BYTES:
                raise PullStopped(f"host '{self.transport.host.name}': the listing of {remote_dir} exceeds {MAX_LISTING_BYTES} bytes;"
                                  " refused, the files stay on the host")
            if entries > room:
                raise PullStopped(f"host '{self.transport.host.name}': {remote_dir} lists more than {room} entries; with the"
                                  f" {self.run_pulled_files} already pulled that passes this run's cap of {self.max_pull_files}"
                                  " files (config reprokit.max_pull_files); the files stay on the host")
            chunks.append(chunk)
        if status.get("exit") != 0:
            raise PullStopped(f"host '{self.transport.host.name}': cannot list {remote_dir} with {self.transport.host.python}: "
                              f"{status.get('stderr', '').strip()[-300:] or 'no output'}")
        return parse_listing(b"".join(chunks).decode("utf-8", errors="replace"), f"host '{self.transport.host.name}'")

    def check_room(self, files: list[RemoteFile], out_dir: Path) -> None:
        """Refuse before writing when the run's cap or this machine's free space would be passed."""
        needed = 0
        for remote in files:
            part = partial_path(out_dir, remote.rel)
            have = part.stat().st_size if part.exists() else 0
            needed += max(0, remote.size - have)
        if self.run_pulled_bytes + needed > self.max_pull_bytes:
            raise PullStopped(f"host '{self.transport.host.name}': {out_dir.name} has {needed} bytes to bring back; with the"
                              f" {self.run_pulled_bytes} already pulled that passes this run's cap of {self.max_pull_bytes}"
                              " bytes (--max-pull-bytes); the files stay on the host")
        free = shutil.disk_usage(out_dir).free
        if needed + FREE_SPACE_RESERVE_BYTES > free:
            raise PullStopped(f"this machine has {free // (1 << 20)} MiB free in {out_dir}, {out_dir.name} needs"
                              f" {needed // (1 << 20) + 1} MiB from host '{self.transport.host.name}' and"
                              f" {FREE_SPACE_RESERVE_BYTES >> 20} MiB are kept free; free space there; the files"
                              " stay on the host")

    def _pull_large(self, remote_dir: str, files: list[RemoteFile], out_dir: Path, on_bytes) -> list[dict[str, str]]:
        """Large files through one host-side reader and one OpenSSH client: resumable, hashed as they arrive; the host
        hashes the same bytes and the two must agree. Each file is read up to its listed size and not one byte more."""
        host = self.transport.host.name
        starts = [self._resume_point(out_dir, remote) for remote in files]
        spec = json.dumps([[f.rel, start, f.size, f.dev, f.ino] for f, start in zip(files, starts)])
        status: dict[str, Any] = {}
        command = self.hostside_command("read-stream", remote_dir, spec)
        argv = self.transport.openssh_argv()
        stream = BufferedStream(self._openssh_source(argv, command, status) if argv else self._channel_source(command, status))
        refused = []
        try:
            for index, (remote, offset) in enumerate(zip(files, starts)):
                header = _frame(stream, index)
                if header is None:
                    raise PullStopped(f"host '{host}': the reader's answer for {remote.rel} is out of order; the files"
                                      " stay on the host")
                if "refused" in header:
                    refused.append({"path": remote.rel, "reason": f"the host refused to read it: {str(header['refused'])[:300]}"})
                    continue
                digest = self._receive(stream, remote, offset, out_dir, on_bytes)
                trailer = _frame(stream, index)
                if trailer is None or not isinstance(trailer.get("sha256"), str):
                    raise ProtocolViolation(f"host '{host}': {remote.rel}: the host sent more than the {remote.size} bytes"
                                            " it listed (protocol violation); the pull-back from this host stops, the files"
                                            " stay on the host")
                self._verified(remote, digest, trailer["sha256"], offset, out_dir)
            if stream.buffer or next(stream.chunks, None) is not None:
                raise ProtocolViolation(f"host '{host}': the reader sent bytes after its answer for {len(files)} files"
                                        " (protocol violation); the pull-back from this host stops, the files stay on the host")
        except EOFError:
            stream.drain()
            if status.get("exit") == hostside.EXIT_REFUSED:  # a file cut while read: the next pass sees its new size
                raise EOFError(status.get("stderr", "").strip()[-300:]) from None
            raise
        stream.drain()
        if status.get("exit") != 0:
            raise EOFError(f"the host's reader ended with {status.get('exit')}: {status.get('stderr', '').strip()[-300:]}")
        return refused

    def _resume_point(self, out_dir: Path, remote: RemoteFile) -> int:
        """Where ``remote`` starts again: its size when a copy is complete (only its digest comes back), or what the
        partial file holds."""
        target = local_target(out_dir, remote.rel)
        if target.is_file() and target.stat().st_size == remote.size:
            return remote.size
        part = partial_path(out_dir, remote.rel)
        offset = part.stat().st_size if part.exists() else 0
        if offset > remote.size:
            part.unlink()
            return 0
        return offset

    def _receive(self, stream: BufferedStream, remote: RemoteFile, offset: int, out_dir: Path, on_bytes) -> Any:
        """Bytes [offset, size) of ``remote`` into its partial file; the sha256 of [0, size)."""
        digest = hashlib.sha256()
        if offset == remote.size and local_target(out_dir, remote.rel).is_file():
            return None  # complete already: compared by its digest
        part = partial_path(out_dir, remote.rel)
        if offset:
            self.pull_stats.resumed += 1
            with open(part, "rb") as fh:
                while chunk := fh.read(CHUNK_BYTES):
                    digest.update(chunk)
        with open(part, "ab") as dst:
            while offset < remote.size:
                chunk = stream.upto(min(CHUNK_BYTES, remote.size - offset))
                try:
                    dst.write(chunk)
                except OSError as exc:
                    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                        part.unlink()  # give the space back, so the record can still say what happened
                        raise PullStopped(f"this machine's disk is full at {out_dir} ({exc.strerror}) while pulling"
                                          f" {remote.rel}; free space there; the files stay on the host") from None
                    raise
                digest.update(chunk)
                offset += len(chunk)
                self.pull_stats.bytes += len(chunk)
                if on_bytes:
                    on_bytes(len(chunk))
        return digest

    def _verified(self, remote: RemoteFile, digest: Any, expected: str, offset: int, out_dir: Path) -> None:
        """Put ``remote`` in place when its bytes hash as the host's do; a stale resumed part starts over."""
        target = local_target(out_dir, remote.rel)
        if digest is None:
            if DIGESTS.sha256_of(target) == expected:
                remote.sha256 = expected
                return
            target.unlink()
            raise EOFError(f"{remote.rel}: the copy here does not match the host's; starting it again")
        part = partial_path(out_dir, remote.rel)
        if digest.hexdigest() != expected:
            part.unlink()
            if offset:  # the kept part may be stale: start over
                raise EOFError(f"{remote.rel}: the resumed copy does not match the host's; starting it again")
            raise PullStopped(f"host '{self.transport.host.name}': {remote.rel} arrived with sha256 {digest.hexdigest()[:12]}...,"
                              f" the host has {expected[:12]}...; the remote copy is kept")
        remote.sha256 = expected
        part.replace(target)
        DIGESTS.remember(target, expected)  # hashed as it arrived: the record lists this digest, not a second read
        self.pull_stats.files += 1
        self.run_pulled_bytes += remote.size

    def _pull_small(self, remote_dir: str, files: list[RemoteFile], out_dir: Path, on_bytes) -> list[dict[str, str]]:
        """Many small files through one host-side reader: a JSON header per file, then its bytes; each verified."""
        spec = json.dumps([[f.rel, f.size, f.dev, f.ino] for f in files])
        status: dict[str, Any] = {}
        stream = BufferedStream(self._channel_source(self.hostside_command("read-many", remote_dir, spec), status))
        refused = []
        for index, remote in enumerate(files):
            try:
                header = json.loads(stream.line())
            except ValueError:
                header = None
            if not isinstance(header, dict) or header.get("i") != index:
                raise PullStopped(f"host '{self.transport.host.name}': the reader's answer for {remote.rel} is out of order; the files"
                                  " stay on the host")
            if "refused" in header:
                refused.append({"path": remote.rel, "reason": f"the host refused to read it: {str(header['refused'])[:300]}"})
                continue
            data = stream.exactly(remote.size)
            if hashlib.sha256(data).hexdigest() != header.get("sha256"):
                raise PullStopped(f"host '{self.transport.host.name}': {remote.rel} arrived damaged (sha256 differs); the remote copy"
                                  " is kept")
            target = local_target(out_dir, remote.rel)
            part = partial_path(out_dir, remote.rel)
            try:
                part.write_bytes(data)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    part.unlink(missing_ok=True)
                    raise PullStopped(f"this machine's disk is full at {out_dir} ({exc.strerror}) while pulling"
                                      f" {remote.rel}; free space there; the files stay on the host") from None
                raise
            part.replace(target)
            DIGESTS.remember(target, header["sha256"])
            remote.sha256 = header["sha256"]
            self.pull_stats.files += 1
            self.pull_stats.bytes += remote.size
            self.run_pulled_bytes += remote.size
            if on_bytes:
                on_bytes(remote.size)
        if stream.buffer or next(stream.chunks, None) is not None:
            raise ProtocolViolation(f"host '{self.transport.host.name}': the reader sent bytes after its answer for"
                                    f" {len(files)} files (protocol violation); the pull-back from this host stops, the"
                                    " files stay on the host")
        stream.drain()
        if status.get("exit") != 0:
            raise EOFError(f"the host's reader ended with {status.get('exit')}: {status.get('stderr', '').strip()[-300:]}")
        return refused

    def _channel_source(self, command: str, status: dict[str, Any]) -> Iterator[bytes]:
        """Run ``command`` (host-side helper on stdin) over the open connection; exit code and stderr into ``status``."""
        channel = self.transport.open_session(WINDOW_BYTES, MAX_PACKET_BYTES)
        what = f"the host's reader ({command.split(' ', 3)[2]})"
        try:
            channel.settimeout(self._check_deadline(what))
            channel.exec_command(command)
            channel.sendall(HOSTSIDE_SOURCE)
            channel.shutdown_write()
            while True:  # each wait ends at the idle timeout or the pull-back's deadline, whichever comes first
                chunk = self._recv(channel.recv, channel, what)
                if not chunk:
                    break
                yield chunk
            errors, kept_bytes = [], 0
            while True:
                err = self._recv(channel.recv_stderr, channel, what)
                if not err:
                    break
                if kept_bytes >= MAX_STDERR_BYTES:  # the host decides how much it says: keep a bounded head, no more
                    raise ProtocolViolation(f"host '{self.transport.host.name}': {what} wrote more than"
                                            f" {MAX_STDERR_BYTES} bytes of errors (protocol violation); the files stay on the host")
                errors.append(err)
                kept_bytes += len(err)
            status["stderr"] = b"".join(errors)[:MAX_STDERR_BYTES].decode(errors="replace")
            if not channel.status_event.wait(min(EXIT_WAIT_S, self._check_deadline(what))):
                raise TimeoutError(f"{what} on host '{self.transport.host.name}' sent its data but did not end")
            status["exit"] = channel.recv_exit_status()
        finally:
            channel.close()

    def _recv(self, receive: Callable[[int], bytes], channel: Any, what: str) -> bytes:
        """One read of the channel, waiting at most until the idle timeout or the deadline; the deadline stops the pull."""
        channel.settimeout(self._check_deadline(what))
        try:
            return receive(CHUNK_BYTES)
        except TimeoutError:
            self._check_deadline(what)  # past the deadline: PullStopped, not a silent link to retry
            raise

    def _openssh_source(self, argv: list[str], command: str, status: dict[str, Any]) -> Iterator[bytes]:
        """The same through the OpenSSH client, with keep-alives and a read timeout: a silent link never hangs it."""
        proc = subprocess.Popen([*argv, command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE)
        try:
            assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
            with contextlib.suppress(OSError, AttributeError):  # the ssh client keeps writing while a chunk is hashed
                fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
            proc.stdin.write(HOSTSIDE_SOURCE)
            proc.stdin.close()
            what = "the host's reader (read-stream)"
            while True:
                wait_s = self._check_deadline(what)
                ready, _, _ = select.select([proc.stdout], [], [], wait_s)
                if not ready:
                    self._check_deadline(what)
                    raise TimeoutError(f"no data from host '{self.transport.host.name}' for {wait_s:.0f} s")
                chunk = proc.stdout.read1(CHUNK_BYTES)
                if not chunk:
                    break
                yield chunk
            errors = b""
            while True:  # bounded like the data: the host decides how much it writes, we decide how much we read
                ready, _, _ = select.select([proc.stderr], [], [], self._check_deadline(what))
                err = proc.stderr.read1(1 << 16) if ready else b""
                if not ready or not err:
                    break
                errors += err
                if len(errors) > MAX_STDERR_BYTES:
                    raise ProtocolViolation(f"host '{self.transport.host.name}': {what} wrote more than"
                                            f" {MAX_STDERR_BYTES} bytes of errors (protocol violation); the files stay on the host")
            status["stderr"] = errors.decode(errors="replace")
            try:
                status["exit"] = proc.wait(timeout=min(EXIT_WAIT_S, self._check_deadline(what)))
            except subprocess.TimeoutExpired:
                raise TimeoutError(f"{what} on host '{self.transport.host.name}' sent its data but did not end") from None
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def _pull_once(self, remote_dir: str, out_dir: Path,
                   on_bytes: Callable[[int], None] | None) -> tuple[Listing, list[dict[str, str]]]:
        """One try at the whole pull: the listing, then the files in batches; what this machine refused."""
        self.deadline = time.monotonic() + DEADLINE_FLOOR_S  # the listing's own bound
        listing = too_long_here(withhold_secret_names(self.list_remote(remote_dir), self.redactor), out_dir)
        refused: list[dict[str, str]] = []
        self.check_room(listing.files, out_dir)
        total = sum(f.size for f in listing.files)
        self.deadline = time.monotonic() + DEADLINE_FLOOR_S + total / DEADLINE_MIN_BYTES_PER_S
        with self.progress(f"pull {posixpath.basename(remote_dir)} from {self.transport.host.name}", total) as advance:
            def count(n: int) -> None:
                self.check_stop()
                advance(n)
                if on_bytes:
                    on_bytes(n)
            small = [f for f in listing.files if f.size < SMALL_FILE_BYTES]
            for batch in batches(small):
                refused += self._pull_small(remote_dir, batch, out_dir, count)
            large = [f for f in listing.files if f.size >= SMALL_FILE_BYTES]
            for batch in batches(large, max_bytes=MAX_PULL_BYTES):
                refused += self._pull_large(remote_dir, batch, out_dir, count)
        return listing, refused

    def pull(self, remote_dir: str, out_dir: Path, on_bytes: Callable[[int], None] | None = None) -> Listing:
        """Bring every file of ``remote_dir`` into ``out_dir``, resuming after drops, each verified by sha256.

        Returns the listing: what came back and what was not pulled (and why). A lost connection that does not
        come back raises the transport's ``ConnectionLost``; anything that must stop the pull, ``PullStopped``.
        """
        started = time.monotonic()
        bytes_before = self.pull_stats.bytes
        host = self.transport.host

        def resume(exc: BaseException, _: float) -> None:
            self.transport.say(f"      pull-back from {host.name} interrupted ({type(exc).__name__}); resuming")
            self.transport.reconnect()

        try:
            listing, refused = resume_policy(self.transport.reconnect_attempts).run(
                lambda _: self._pull_once(remote_dir, out_dir, on_bytes), resume)
        except LINK_ERRORS as exc:
            local = unwritable(exc) or local_failure(exc)
            if local:
                raise PullStopped(f"{local}; the files stay on host '{host.name}'") from None
            raise PullStopped(f"host '{host.name}': pull-back of {remote_dir} failed: {exc};"
                              " the files stay on the host") from None
        self.deadline = float("inf")
        self.run_pulled_files += len(listing.files)
        with contextlib.suppress(OSError):  # nothing is half-pulled any more
            (out_dir.parent / f".partial-{out_dir.name}").rmdir()
        refused_paths = {r["path"] for r in refused}
        listing.files = [f for f in listing.files if f.rel not in refused_paths]
        listing.not_pulled += [{**entry, "path": self.redactor(entry["path"])} for entry in refused]
        elapsed = time.monotonic() - started
        self.pull_stats.seconds += elapsed
        moved = self.pull_stats.bytes - bytes_before
        if moved >= PULL_REPORT_BYTES:
            self.transport.say(f"      pulled {len(listing.files)} files, {moved / 1e6:.1f} MB in {elapsed:.1f} s"
                     f" ({moved / 1e6 / max(elapsed, 1e-9):.0f} MB/s), sha256 verified")
        for remote in listing.files:
            self.redactor.file(out_dir / remote.rel)
        for entry in listing.not_pulled:
            self.transport.say(f"      not pulled from {host.name}: {entry['path']!r}: {entry['reason']} (kept on the host)")
        return listing


__all__ = ["BufferedStream", "Listing", "ProtocolViolation", "PullBack", "PullStats", "PullStopped", "RemoteFile",
           "RemoteRefused", "batches", "local_target", "parse_listing", "partial_path", "unsafe_reason"]


LOCAL_ERRNOS = (errno.ENAMETOOLONG, errno.ENOSPC, errno.EDQUOT)  # this machine's limits: no reconnect helps


def resume_policy(reconnects: int) -> Retry:
    """A pull-back interrupted by a link error resumes after a reconnect (whose own backoff is the wait), up to
    ``reconnects`` times; an error of this machine's disk (read-only, full, a name too long) is not the link's."""
    return Retry(attempts=reconnects + 1, transient=lambda exc: isinstance(exc, LINK_ERRORS)
                 and not (unwritable(exc) or local_failure(exc)))


def local_failure(exc: BaseException) -> str | None:
    """One line for an error of this machine's file system (a name too long, a full disk), or None for any other."""
    if not isinstance(exc, OSError) or exc.errno not in LOCAL_ERRNOS or exc.filename is None:
        return None
    return f"this machine cannot write {shown(str(exc.filename)[-200:])} ({exc.strerror})"


def _frame(stream: BufferedStream, index: int) -> dict[str, Any] | None:
    """The reader's next framing line for file ``index`` (a header or a trailer), or None when it is not one."""
    try:
        frame = json.loads(stream.line())
    except (ValueError, PullStopped):
        return None
    return frame if isinstance(frame, dict) and frame.get("i") == index else None
