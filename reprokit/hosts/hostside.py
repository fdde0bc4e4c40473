"""The GPU host's side of the pull-back: list a step directory and read its files, following no link.

Runs on the host with the standard library only, as ``python3 - list ROOT``, ``python3 - read ROOT REL
OFFSET SIZE DEV INO``, ``python3 - read-stream ROOT JSON`` (large files) or ``python3 - read-many ROOT JSON`` (small files) with this file's text on standard input, so it needs nothing installed there and
works for ``invoke collect`` of a run whose workload code is gone.

Nothing the host sends is trusted, but the host is where links can be swapped: every path is opened one
component at a time from the step directory's descriptor with ``O_NOFOLLOW``, and a file is read only if it
is still the regular file (device and inode) the listing saw. The listing is JSON, one object per line,
so no name (newlines, spaces, bytes that are not UTF-8) can forge an entry.
"""

import hashlib
import json
import os
import stat
import sys

CHUNK_BYTES = 1 << 20
PIPE_BYTES = 1 << 20
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO swapped in must not block the open
KINDS = {stat.S_IFLNK: "symlink", stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "character device",
         stat.S_IFBLK: "block device"}
EXIT_REFUSED = 3  # the file is unreadable, changed since the listing, or no longer a regular file


def emit(entry):
    sys.stdout.write(json.dumps(entry) + "\n")


def walk(dir_fd, prefix):
    """Emit every entry under ``dir_fd``; descend into directories by descriptor, never through a link."""
    with os.scandir(dir_fd) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        rel = prefix + name
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            emit({"path": rel, "kind": "unreadable", "error": exc.strerror})
            continue
        kind = stat.S_IFMT(info.st_mode)
        if kind == stat.S_IFDIR:
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                emit({"path": rel, "kind": "unreadable", "error": exc.strerror})
                continue
            try:
                walk(child, rel + "/")
            except OSError as exc:
                emit({"path": rel, "kind": "unreadable", "error": exc.strerror})
            finally:
                os.close(child)
        elif kind == stat.S_IFREG:
            emit({"path": rel, "kind": "file", "size": info.st_size, "dev": info.st_dev, "ino": info.st_ino})
        else:
            emit({"path": rel, "kind": KINDS.get(kind, "other")})


def open_inside(root, rel):
    """A descriptor of ``root/rel``, opened component by component with O_NOFOLLOW."""
    fd = os.open(root, DIR_FLAGS)
    parts = rel.split("/")
    try:
        for part in parts[:-1]:
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        return os.open(parts[-1], FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def refuse(reason):
    sys.stderr.write(f"refused: {reason}\n")
    sys.exit(EXIT_REFUSED)


def read(root, rel, offset, size, dev, ino):
    """Write bytes [offset, size) of the file to stdout; its sha256 over [0, size) goes last on stderr."""
    try:
        fd = open_inside(root, rel)
    except OSError as exc:
        refuse(f"cannot open it without following a link ({exc.strerror})")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (dev, ino):
        refuse("it was replaced after the listing")
    if info.st_size < size:
        refuse(f"it shrank from {size} to {info.st_size} bytes after the listing")
    os.set_blocking(fd, True)
    digest = hashlib.sha256()
    out = sys.stdout.buffer
    try:  # a pipe to sshd of Linux's default 64 KiB stalls this reader at every chunk
        import fcntl
        fcntl.fcntl(out.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
    position = 0
    while position < size:
        chunk = os.read(fd, min(CHUNK_BYTES, size - position))
        if not chunk:
            refuse(f"it ended at byte {position} of {size}")
        digest.update(chunk)
        if position + len(chunk) > offset:
            out.write(chunk[max(0, offset - position):])
        position += len(chunk)
    out.flush()
    sys.stderr.write(f"sha256 {digest.hexdigest()}\n")


def read_stream(root, spec):
    """Large files through one reader: per file a JSON header line (or why not), bytes [offset, size), then a
    trailer line with its sha256 over [0, size); one SSH connection and one Python start for all of them."""
    out = sys.stdout.buffer
    try:  # a pipe to sshd of Linux's default 64 KiB stalls this reader at every chunk
        import fcntl
        fcntl.fcntl(out.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
    for index, (rel, offset, size, dev, ino) in enumerate(json.loads(spec)):
        try:
            fd = open_inside(root, rel)
        except OSError as exc:
            out.write(json.dumps({"i": index, "refused": f"cannot open it without following a link ({exc.strerror})"})
                      .encode() + b"\n")
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (dev, ino):
                out.write(json.dumps({"i": index, "refused": "it was replaced after the listing"}).encode() + b"\n")
                continue
            if info.st_size < size:
                out.write(json.dumps({"i": index, "refused": f"it shrank from {size} to {info.st_size} bytes after the"
                                      " listing"}).encode() + b"\n")
                continue
            os.set_blocking(fd, True)
            out.write(json.dumps({"i": index}).encode() + b"\n")
            digest = hashlib.sha256()
            position = 0
            while position < size:
                chunk = os.read(fd, min(CHUNK_BYTES, size - position))
                if not chunk:  # cut while it was read: the framing cannot go on; the control machine resumes
                    out.flush()
                    refuse(f"{rel} ended at byte {position} of {size}")
                digest.update(chunk)
                if position + len(chunk) > offset:
                    out.write(chunk[max(0, offset - position):])
                position += len(chunk)
            out.write(json.dumps({"i": index, "sha256": digest.hexdigest()}).encode() + b"\n")
        finally:
            os.close(fd)
    out.flush()


def read_many(root, spec):
    """Small files in one go: per file a JSON header line (its sha256, or why not), then its bytes when it is ok."""
    out = sys.stdout.buffer
    for index, (rel, size, dev, ino) in enumerate(json.loads(spec)):
        try:
            fd = open_inside(root, rel)
        except OSError as exc:
            out.write(json.dumps({"i": index, "refused": f"cannot open it without following a link ({exc.strerror})"})
                      .encode() + b"\n")
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (dev, ino):
                reason = "it was replaced after the listing"
            elif info.st_size < size:
                reason = f"it shrank from {size} to {info.st_size} bytes after the listing"
            else:
                os.set_blocking(fd, True)
                data = b""
                while len(data) < size and (chunk := os.read(fd, size - len(data))):
                    data += chunk
                reason = None if len(data) == size else f"it ended at byte {len(data)} of {size}"
        finally:
            os.close(fd)
        if reason:
            out.write(json.dumps({"i": index, "refused": reason}).encode() + b"\n")
        else:
            out.write(json.dumps({"i": index, "sha256": hashlib.sha256(data).hexdigest()}).encode() + b"\n" + data)
    out.flush()


def main(argv):
    if argv[:1] == ["list"] and len(argv) == 2:
        try:
            root = os.open(argv[1], DIR_FLAGS)
        except OSError as exc:
            emit({"path": "", "kind": "unreadable", "error": exc.strerror})
            return 0
        walk(root, "")
        return 0
    if argv[:1] == ["read"] and len(argv) == 7:
        read(argv[1], argv[2], *map(int, argv[3:7]))
        return 0
    if argv[:1] == ["read-stream"] and len(argv) == 3:
        read_stream(argv[1], argv[2])
        return 0
    if argv[:1] == ["read-many"] and len(argv) == 3:
        read_many(argv[1], argv[2])
        return 0
    sys.stderr.write("usage: list ROOT | read ROOT REL OFFSET SIZE DEV INO | read-many ROOT JSON | read-stream ROOT JSON\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
