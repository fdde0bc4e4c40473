"""Which of FlashInfer's own ways to keep a tactic from being profiled a release's autotuner honours, read from its wheel.

Three mechanisms, each judged from the release's sources (no GPU):

- ``blocklist``: ``FLASHINFER_TACTICS_BLOCKLIST`` (0.6.15+), read when the ``AutoTuner`` is created, applied in
  ``choose_one``'s tactic loop (``self._blocklist.filter(custom_op, runner, valid_tactics)``) before profiling;
- ``skip_ops``: ``autotune(..., skip_ops=...)`` (0.6.13+): a skipped op returns before the tactic loop and runs
  its fallback tactic;
- ``autotune_v2`` (0.7.x, flashinfer PR 3861): managed on-disk persistence. In the releases read so far it opens
  the plain ``autotune(...)`` context (``skip_ops`` forwarded) and tuning still goes through ``choose_one``, so the
  blocklist applies there too. Neither path filters a tactic that a cache (``autotune(cache=...)`` or v2's
  managed store) already holds from an earlier run without the blocklist: only profiling candidates are filtered.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reprokit.fix import blocklist

# What a real GPU showed, per release (evidence/h200-fused-moe-sm90-run): only releases listed here were seen.
SEEN_ON_GPU = {
    "0.6.18": ("seen on an H200 (sm90, bf16 CUTLASS fused MoE, 2026-12-02): with the blocklist the autotuner never "
               "profiled gemm1 tactics 2, 5 or gemm2 tactic 47 (123 of 126 tactics, 615 profile lines) and profiled "
               "all 126 without it (630); skip_ops={'trtllm::fused_moe::gemm1'} profiled no gemm1 tactic (81 of gemm2)"),
}
V2_MODULES = ("flashinfer/autotune_cache.py", "flashinfer/autotuner/autotuner.py", "flashinfer/autotuner.py")


def _function_body(source: str, name: str) -> tuple[int, str] | None:
    """(line, text) of a top-level or method ``def name(`` up to the next def at the same or lower indent."""
    match = re.search(rf"^(\s*)def {name}\(", source, re.M)
    if not match:
        return None
    indent = len(match.group(1))
    rest = source[match.end():]
    end = re.search(rf"^\s{{0,{indent}}}(def|class) ", rest, re.M)
    return source[:match.start()].count("\n") + 1, rest[:end.start() if end else len(rest)]


def mechanisms(wheel: Path) -> dict[str, Any]:
    """Per mechanism: honoured or not, and where the release's source says so."""
    member, autotuner = blocklist.autotuner_source(wheel)
    fmt = blocklist.blocklist_format(wheel)
    choose = _function_body(autotuner, "choose_one")
    filters = choose is not None and "_blocklist.filter(" in choose[1]
    out: dict[str, Any] = {
        "blocklist": {"honoured": fmt.reads_blocklist and filters,
                      "evidence": fmt.evidence + (f"; {member}:{choose[0]} choose_one filters the tactics it profiles"
                                                  if filters else "; choose_one does not call _blocklist.filter")}}
    auto = _function_body(autotuner, "autotune")
    takes = auto is not None and "skip_ops" in autotuner[autotuner.find("def autotune("):][:600].split(")")[0]
    out["skip_ops"] = {"honoured": takes, "evidence": f"{member}:{auto[0]} autotune(..., skip_ops=...)"
                       if takes and auto else f"{member}: autotune() takes no skip_ops"}
    v2 = None
    for candidate in V2_MODULES:
        text = blocklist.read_member(wheel, candidate)
        body = _function_body(text, "autotune_v2") if text else None
        if body:
            v2 = (candidate, body)
            break
    if v2 is None:
        out["autotune_v2"] = {"present": False, "evidence": "no def autotune_v2 in " + ", ".join(V2_MODULES)}
        return out
    candidate, (line, body) = v2
    delegates = re.search(r"with autotune\(", body) is not None
    forwards = "skip_ops=skip_ops" in body
    out["autotune_v2"] = {
        "present": True, "delegates_to_autotune": delegates, "forwards_skip_ops": forwards,
        "blocklist_honoured": delegates and out["blocklist"]["honoured"],
        "evidence": f"{candidate}:{line} autotune_v2 " + ("opens autotune(...)" if delegates else "does not open autotune()")
                    + (" with skip_ops=skip_ops" if forwards else "") + "; tuning then goes through choose_one",
        "caveat": "a tactic already in a cache (autotune(cache=...) or v2's managed store) is replayed unfiltered"}
    return out


def seen_on_gpu(version: str) -> str:
    """What a GPU run showed for this release's autotuner, or that none was made."""
    return SEEN_ON_GPU.get(version, f"not seen on a GPU for {version}: the lines above are read from its sources")


def summary_lines(found: dict[str, Any]) -> list[str]:
    """One line per mechanism, as ``invoke fix`` prints them, then what a GPU showed (``seen_on_gpu``, set by the plan)."""
    lines = [f"blocklist: {'honoured' if found['blocklist']['honoured'] else 'not honoured'} ({found['blocklist']['evidence']})",
             f"skip_ops: {'honoured' if found['skip_ops']['honoured'] else 'not honoured'} ({found['skip_ops']['evidence']})"]
    v2 = found["autotune_v2"]
    if not v2["present"]:
        lines.append("autotune_v2: not in this release")
    else:
        lines.append(f"autotune_v2: blocklist {'honoured' if v2['blocklist_honoured'] else 'NOT honoured'}, skip_ops "
                     f"{'forwarded' if v2['forwards_skip_ops'] else 'not forwarded'} ({v2['evidence']}); {v2['caveat']}")
    if "seen_on_gpu" in found:
        lines.append(f"on a GPU: {found['seen_on_gpu']}")
    return lines
