"""No test mode in the product: nothing under reprokit/ or ansible/ names a test double, a test host or `cpu_only`.

A test host is a GPU host whose GPU is a double (tests/doubles): the product treats every host the same, so it has
no reason to know about either. Words are matched case-insensitively, in code, comments and docs alike.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PRODUCT = ("reprokit", "ansible")
TEXT = (".py", ".yml", ".yaml", ".md", ".j2", ".sh", ".cfg", ".toml", ".txt", ".h", ".cu", ".cuh", ".json")
WORDS = re.compile(
    r"cpu[_ -]only"                       # the flag that made the planner run GPU steps on a GPU-less host
    r"|(?<![-\w])doubles?(?![-\w])"      # a test double (not double-check, double-quoted)
    r"|\btest[ _-]?hosts?\b"              # the test hosts, by kind
    r"|\bfor tests?\b|\bwhen test(ed|ing)\b"
    r"|reprokit-test|sshhosts|\brk-(h[1-8]|gw|priv)\b|10\.21[34]\.0\."  # the test services, by name and address
    , re.IGNORECASE)


def product_files() -> list[Path]:
    return sorted(p for top in PRODUCT for p in (REPO / top).rglob("*")
                  if p.is_file() and p.suffix in TEXT and "__pycache__" not in p.parts)


def test_the_product_names_no_double_no_test_host_and_no_cpu_only() -> None:
    found = []
    for path in product_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if match := WORDS.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {match.group(0)!r} in {line.strip()[:100]}")
    assert not found, ("the product names a test mode; a double belongs in tests/doubles and behaves like the real part"
                       " from the outside:\n" + "\n".join(found))


def test_the_guard_reads_the_product_and_knows_the_words() -> None:
    assert len(product_files()) > 100  # every module and role file, not an empty glob
    assert [bool(WORDS.search(s)) for s in ("cpu_only: true", "a test double", "the test hosts", "rk-h2", "double-check",
                                            "under test", "the step's host")] == [True, True, True, True, False, False, False]
