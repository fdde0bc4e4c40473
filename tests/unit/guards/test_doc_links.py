"""Every relative link of README.md and docs/ leads somewhere: the file exists, and an anchor names a heading of it
(as GitHub makes a heading's anchor) or an explicit ``<a id>``. Links to the web are not followed (no network here)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), REPO / "benchmarks" / "README.md"]
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def prose(text: str) -> str:
    """The page without its code blocks and inline code, where brackets are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: Counter[str] = Counter()
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        base = slug(heading)
        found.add(base if not seen[base] else f"{base}-{seen[base]}")
        seen[base] += 1
    found |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return found


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto:


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {destination.relative_to(REPO)}")
    assert broken == [], f"{page.relative_to(REPO)}: {broken}"


def test_the_checker_reads_headings_and_links_as_github_does(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Hosts and Slurm\n## `invoke repro`: a run\n## Exit codes\n## Exit codes\n"
                    "[a](#hosts-and-slurm) [b](#invoke-repro-a-run) [c](#exit-codes-1) [d](other.md#x) `[e](#no)`\n"
                    "```\n[f](#nope)\n```\n", encoding="utf-8")
    assert anchors(page) == {"hosts-and-slurm", "invoke-repro-a-run", "exit-codes", "exit-codes-1"}
    assert links(page) == ["#hosts-and-slurm", "#invoke-repro-a-run", "#exit-codes-1", "other.md#x"]
