"""The rank model: one log of N rank processes, their lines interleaved, read as one server with N ranks.

Why: an EP8 server's warmup is eight processes, each running FlashInfer's autotuner on its own experts, all
writing to one console. Whether a blocklist or ``skip_ops`` was honoured "on every rank" is a question about
each rank's lines, not about the log as a whole: a rank that profiled a blocked tactic is hidden among seven
that did not. ``torch.distributed.run --tee`` puts ``[<role><local rank>]:`` before every line of a worker
(``torchrun_tee`` in ``formats.py``), c10d ``[rank<N>]:`` (``torch_rank``); several records can share one
physical line after a tqdm bar, each with its own prefix. Everything after a prefix up to the next belongs to
that rank.

Per rank: its lines, the tactics its autotuner profiled and skipped (``facts/autotuner.py``, the lines FlashInfer
writes), the blocklist's "Filtered" lines, NCCL's own lines. A file named ``rank<N>.log`` (``.gz``) without prefixes
is rank N's own (the per-rank files ``torch.distributed.run`` saves). Across ranks: how many there are, whether their
lines interleave, and whether every rank profiled and skipped the same tactics.

    model = rank_model([Path("server.log")])
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprokit.triage.formats import LINE_FORMATS_BY_NAME
from reprokit.triage.reader import ReadStats, iter_regions, open_log
from reprokit.workloads.facts.autotuner import BLOCKLIST_FILTERED, PROFILED_TACTIC, SKIPPED_TACTIC

RANK_PREFIX = re.compile("|".join(f"(?:{LINE_FORMATS_BY_NAME[name].regex})" for name in ("torch_rank", "torchrun_tee"))
                         .replace("(?P<rank>", "(?:").replace("(?P<worker>", "(?:"))
RANK_NUMBER = re.compile(r"(\d+)\]:$")
RANK_FILE = re.compile(r"^rank(\d+)\.log(?:\.gz)?$")  # torch.distributed.run's per-rank files, saved flat by ep-moe
NCCL_LINE = re.compile(r"\bNCCL (?:INFO|WARN)\b")
MAX_RANKS = 1024  # a garbage log could invent any number of prefixes


@dataclass
class RankProcess:
    rank: int
    prefix: str
    lines: int = 0
    first_line: int = 0
    last_line: int = 0
    profiled: set[int] = field(default_factory=set)
    profile_lines: int = 0
    skipped: set[int] = field(default_factory=set)
    blocklist_filtered: list[tuple[str, int, int]] = field(default_factory=list)  # (runner, filtered, remaining)
    nccl_lines: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "prefix": self.prefix, "lines": self.lines, "first_line": self.first_line,
                "last_line": self.last_line, "profiled": sorted(self.profiled), "profile_lines": self.profile_lines,
                "skipped": sorted(self.skipped), "blocklist_filtered": [list(f) for f in self.blocklist_filtered],
                "nccl_lines": self.nccl_lines}


def _segments(line: str) -> list[tuple[str | None, str]]:
    """(prefix or None, text) pieces of one physical line: each prefix owns the text up to the next one."""
    marks = list(RANK_PREFIX.finditer(line))
    if not marks:
        return [(None, line)]
    pieces = [(None, line[:marks[0].start()])] if marks[0].start() else []
    for mark, after in zip(marks, [*marks[1:], None]):
        pieces.append((mark.group(0), line[mark.end():after.start() if after else len(line)]))
    return pieces


def _lines(stream: Any) -> Iterator[str]:
    """The log's lines, as the triage's reader bounds and normalises them (regions hold whole lines)."""
    for buffer, start, end in iter_regions(stream, ReadStats()):
        yield from bytes(buffer[start:end]).decode("utf-8", "replace").split("\n")


def _note(process: RankProcess, text: str, line_no: int) -> None:
    if process.lines == 0:
        process.first_line = line_no
    process.lines += 1
    process.last_line = line_no
    if (found := PROFILED_TACTIC.search(text)) is not None:
        process.profiled.add(int(found.group(2)))
        process.profile_lines += 1
    elif (found := SKIPPED_TACTIC.search(text)) is not None:
        process.skipped.add(int(found.group(2)))
    elif (found := BLOCKLIST_FILTERED.search(text)) is not None:
        entry = (found.group(2), int(found.group(1)), int(found.group(3)))
        if entry not in process.blocklist_filtered:
            process.blocklist_filtered.append(entry)
    elif NCCL_LINE.search(text):
        process.nccl_lines += 1


def rank_model(paths: list[Path]) -> dict[str, Any]:
    """The rank processes of the logs in ``paths`` (ranks in separate files or interleaved in one), and what holds
    on every rank. A claim on every rank is false where no rank was found, never vacuously true."""
    processes: dict[str, RankProcess] = {}
    unprefixed, switches, last_prefix = 0, 0, None
    for path in paths:
        own = RANK_FILE.match(path.name)  # a rank's own file carries no prefix: its name says whose lines they are
        with open_log(path) as (stream, _):
            for line_no, line in enumerate(_lines(stream), start=1):
                if not line.strip():
                    continue
                for prefix, text in _segments(line):
                    if prefix is None and own is not None:
                        prefix = f"[rank{own.group(1)}]:"
                    if prefix is None:
                        unprefixed += bool(text.strip())
                        continue
                    if prefix not in processes and len(processes) < MAX_RANKS:
                        processes[prefix] = RankProcess(rank=int(RANK_NUMBER.search(prefix).group(1)), prefix=prefix)
                    if prefix in processes:
                        switches += last_prefix is not None and prefix != last_prefix
                        last_prefix = prefix
                        _note(processes[prefix], text, line_no)
    ranks = sorted(processes.values(), key=lambda p: (p.rank, p.prefix))
    profiled = [p.profiled for p in ranks]
    skipped = [p.skipped for p in ranks]
    return {
        "rank_count": len(ranks),
        "ranks": [p.to_json() for p in ranks],
        "interleaved": switches > len(paths),
        "lines_without_rank": unprefixed,
        "same_profiled_on_every_rank": bool(ranks) and all(p == profiled[0] for p in profiled),
        "same_skipped_on_every_rank": bool(ranks) and all(s == skipped[0] for s in skipped),
        "profiled_on_every_rank": sorted(set.intersection(*profiled)) if ranks else [],
        "nccl_lines": sum(p.nccl_lines for p in ranks),
    }
