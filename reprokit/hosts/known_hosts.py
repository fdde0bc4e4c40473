"""Check a known_hosts file before paramiko reads it: every malformed form is one line naming file:line.

paramiko raised tracebacks for a directory, a binary file or bad base64, and skips ``@cert-authority`` and
``@revoked`` lines: a revoked key would then be trusted. Those markers are refused here, as is anything
that is not a regular file (a FIFO would block the run forever).
"""

from __future__ import annotations

import base64
import binascii
import stat
import struct
from pathlib import Path

from reprokit.errors import ConfigError

MAX_KNOWN_HOSTS_BYTES = 16 << 20


def check_known_hosts(path: Path | str) -> None:
    """Raise ``ConfigError`` unless ``path`` is missing or a known_hosts file paramiko can read as meant."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the known_hosts file ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: the known_hosts file is not a regular file (a directory or FIFO?); give a file")
    if info.st_size > MAX_KNOWN_HOSTS_BYTES:
        raise ConfigError(f"{path}: {info.st_size} bytes is too big for a known_hosts file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: the known_hosts file is not text (byte {exc.start}); give an OpenSSH known_hosts file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the known_hosts file ({exc.strerror})") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if fields[0].startswith("@"):
            raise ConfigError(f"{path}:{number}: '{fields[0]}' lines are not supported (paramiko would ignore them, and"
                              " a revoked key would be trusted); list the host keys themselves and remove this line")
        if len(fields) < 3:
            raise ConfigError(f"{path}:{number}: expected 'HOSTS KEYTYPE BASE64-KEY'; fix or remove the line")
        _check_key(path, number, fields[1], fields[2])


def _check_key(path: Path, number: int, key_type: str, key_b64: str) -> None:
    try:
        blob = base64.b64decode(key_b64, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{path}:{number}: the key is not valid base64; copy the line again (ssh-keyscan)") from None
    try:
        (length,) = struct.unpack(">I", blob[:4])
        inner = blob[4:4 + length].decode("ascii")
    except (struct.error, UnicodeDecodeError):
        inner = None
    if inner != key_type:
        raise ConfigError(f"{path}:{number}: the key data is not a {key_type} key; copy the line again (ssh-keyscan)")
