"""Masking speed (reprokit/output/secrets.py ``Redactor.file``) on ordinary and adversarial data, before and after #40.

The masker runs on every file of a record while the host's lock is held, so its speed on data a workload (or an
attacker) chooses bounds how long a host stays locked. Four files of --mib MiB each: a server log with no secret,
data made of a secret's pieces (its variants cut three bytes short, one per line: every piece matches the start of a
variant, none is whole), a log full of the secret itself, and the pieces with a whole secret every 64 KiB. Each is masked by the former masker (one regex of
every variant with an optional line break between any two characters, kept below as it was, for the ratio) and
by the current one, in this one run, on this machine; the outputs of both are checked to mask the same secrets.

Prints MB/s for each and the ratio. Target: linear in the data (the same MB/s for 8 and 32 MiB) and >= 30 MB/s on
adversarial data (before: about 3 MB/s, 5 minutes of lock per GB).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reprokit.output.secrets import CHUNK_BYTES, MASK, MIN_SECRET_CHARS, WRAP_CHARS, Redactor, _replacing, variants  # noqa: E402

SECRET = "hf_Planted/0123+456789=abcdefXYZ"


class FormerRedactor:
    """The masker before #40 (reprokit/secrets.py at 485de5b), plain files only: a regex of every variant with an
    optional line break between any two characters, run on every read whose anchors show."""

    BREAK = rb"(?:\r?\n)?"

    def __init__(self, values: list[str]):
        folded: set[bytes] = set()
        exact: set[bytes] = set()
        for value in values:
            more_folded, more_exact = variants(value)
            folded |= more_folded
            exact |= more_exact
        needles = [b"(?i:" + self._spread(n) + b")" for n in sorted(folded, key=len, reverse=True)]
        needles += [self._spread(n) for n in sorted(exact, key=len, reverse=True)]
        self._pattern = re.compile(b"|".join(needles))
        self._folded_anchors = [re.compile(re.escape(a)) for a in sorted({a for n in folded for a in self._anchors(n.lower())})]
        self._exact_anchors = [re.compile(re.escape(a)) for a in sorted({a for n in exact for a in self._anchors(n)})]
        self._overlap_bytes = max(len(n) for n in folded | exact) * 3

    def _spread(self, needle: bytes) -> bytes:
        return self.BREAK.join(re.escape(needle[i:i + 1]) for i in range(len(needle)))

    @staticmethod
    def _anchors(needle: bytes) -> set[bytes]:
        size = max(1, min(6, len(needle) // 3))
        middle = (len(needle) - size) // 2
        pieces = {needle[:size], needle[-size:]}
        return pieces | {needle[middle:middle + size]} if len(needle) > WRAP_CHARS else pieces

    def may_hold(self, data: bytes) -> bool:
        if any(anchor.search(data) for anchor in self._exact_anchors):
            return True
        lowered = data.lower()
        return any(anchor.search(lowered) for anchor in self._folded_anchors)

    def _chunks(self, fh, chunk_bytes: int):
        carry = b""
        while chunk := fh.read(chunk_bytes):
            data = carry + chunk
            held = self.may_hold(data)
            cut = max(0, len(data) - self._overlap_bytes)
            for match in self._pattern.finditer(data) if held else ():
                if match.start() >= cut:
                    break
                cut = max(cut, match.end())
            yield data[:cut], held
            carry = data[cut:]
        if carry:
            yield carry, self.may_hold(carry)

    def file(self, path: Path, chunk_bytes: int = CHUNK_BYTES) -> bool:
        with open(path, "rb") as fh:
            if not any(held and self._pattern.search(piece) for piece, held in self._chunks(fh, chunk_bytes)):
                return False
        with _replacing(path) as dst, open(path, "rb") as src:
            for piece, held in self._chunks(src, chunk_bytes):
                dst.write(self._pattern.sub(MASK.encode(), piece) if held else piece)
        return True


def datasets(size: int) -> dict[str, bytes]:
    folded, exact = variants(SECRET)
    pieces = b"".join(v[:-3] + b"\n" for v in sorted(folded | exact) if len(v) > MIN_SECRET_CHARS)
    line = b"INFO 12-06 06:00:00 [engine.py:312] Avg prompt throughput: 1234.5 tokens/s, running: 8 reqs\n"
    full = b"token=" + SECRET.encode() + b" in a line of a log that leaked it\n"
    made = {name: (unit * (size // len(unit) + 1))[:size]
            for name, unit in (("ordinary log", line), ("a secret's pieces", pieces), ("the secret itself", full))}
    every = 1 << 16  # a whole secret every 64 KiB among the pieces: the substitution must run, on the pieces too
    made["pieces + secrets"] = b"".join(made["a secret's pieces"][i:i + every] + full for i in range(0, size, every))
    return made


def timed(redactor, path: Path, data: bytes) -> tuple[float, bytes]:
    path.write_bytes(data)
    started = time.perf_counter()
    redactor.file(path)
    return time.perf_counter() - started, path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, nargs="+", default=[8, 32])
    args = parser.parse_args()
    former, current = FormerRedactor([SECRET]), Redactor([SECRET])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "artifact"
        for mib in args.mib:
            for name, data in datasets(mib << 20).items():
                before_s, before = timed(former, path, data)
                after_s, after = timed(current, path, data)
                same = before.count(MASK.encode()) == after.count(MASK.encode())
                mb = len(data) / 1e6
                print(f"{mib:3d} MiB {name:18s} former {mb / before_s:8.1f} MB/s   now {mb / after_s:8.1f} MB/s"
                      f"   x{before_s / after_s:6.1f}   masks {after.count(MASK.encode())}"
                      f"{'' if same else f' (former: {before.count(MASK.encode())})'}", flush=True)


if __name__ == "__main__":
    main()
