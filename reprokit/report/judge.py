"""Judge a run against its kit's expectations.

Each expectation reads one value (or, through ``[*]``, every item's value) at
a path in a step's JSON result and compares it with one operator. A step that
did not produce a result, a host of the wrong architecture, a missing GPU, or a
value the step reports as null (it could not tell: no torch to compare with, say)
makes an expectation INCONCLUSIVE, with the reason; never a silent pass.
"""

from __future__ import annotations

import re
from typing import Any

from reprokit.config.kit import Describes, Expectation, Kit
from reprokit.records.fingerprint import Fingerprint
from reprokit.records.models import Judgement, StepEntry, Verdict, Word
from reprokit.workloads.facts.exits import StepStatus

_TOKEN = re.compile(r"([A-Za-z_][\w-]*)|\[(\*|\d+)\]")


class PathMissing(Exception):
    pass


def resolve(path: str, data: Any) -> tuple[list[Any], bool]:
    """Values at ``path`` in ``data``; the bool says whether ``[*]`` expanded a list."""
    values = [data]
    expanded = False
    for part in path.split("."):
        for key, index in _TOKEN.findall(part):
            nxt: list[Any] = []
            for value in values:
                if key:
                    if not isinstance(value, dict) or key not in value:
                        raise PathMissing(key)
                    nxt.append(value[key])
                elif index == "*":
                    if not isinstance(value, list):
                        raise PathMissing("[*]")
                    nxt.extend(value)
                    expanded = True
                else:
                    if not isinstance(value, list) or int(index) >= len(value):
                        raise PathMissing(f"[{index}]")
                    nxt.append(value[int(index)])
            values = nxt
    return values, expanded


def plain(value: Any) -> str:
    """A value as a person writes it (``true``, ``128x256x128, 256x128x128``, ``1``), never a Python repr: records,
    the console and the reports all show the judge's words."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(plain(item) for item in value) if value else "nothing"
    if isinstance(value, dict):
        return ", ".join(f"{key} {plain(item)}" for key, item in value.items())
    if value is None:
        return "nothing"
    return str(value)


_OPERATOR_WORDS = {"equals": "is", "one_of": "one of", "at_least": "at least", "at_most": "at most",
                   "contains_all": "contains all of", "matches": "matches"}


def _expected_text(exp: Expectation) -> str:
    op = exp.operator
    value = getattr(exp, op)
    if op == "reference":
        return reference_text(value)
    if op == "equals_by_arch":
        return f"by arch: {plain(value)}"
    return f"{_OPERATOR_WORDS[op]} {plain(value)}"


def reference_bounds(ref: Any) -> tuple[float | None, float | None]:
    """The lowest and highest value a ReFrame-style reference accepts (None: unbounded)."""
    low = ref.value * (1 + ref.lower) if ref.lower is not None else None
    high = ref.value * (1 + ref.upper) if ref.upper is not None else None
    return low, high


def reference_text(ref: Any) -> str:
    unit = f" {ref.unit}" if ref.unit else ""
    low, high = (f"{b:+.0%}" if b is not None else "unbounded" for b in (ref.lower, ref.upper))
    return f"reference {ref.value:g}{unit} ({low} / {high})"


def _compare(exp: Expectation, value: Any, arch: str | None) -> tuple[bool, str]:
    op = exp.operator
    if op == "equals":
        return value == exp.equals, ""
    if op == "one_of":
        return value in exp.one_of, ""
    if op in ("at_least", "at_most"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False, f"{plain(value)} is not a number"
        return (value >= exp.at_least) if op == "at_least" else (value <= exp.at_most), ""
    if op == "contains_all":
        if not isinstance(value, list):
            return False, f"{plain(value)} is not a list"
        missing = [item for item in exp.contains_all if item not in value]
        return not missing, f"missing {plain(missing)}" if missing else ""
    if op == "matches":
        return isinstance(value, str) and re.search(exp.matches, value) is not None, ""
    if op == "equals_by_arch":
        return value == exp.equals_by_arch[arch], ""
    if op == "reference":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False, f"{plain(value)} is not a number"
        low, high = reference_bounds(exp.reference)
        unit = f" {exp.reference.unit}" if exp.reference.unit else ""
        deviation = (value - exp.reference.value) / exp.reference.value if exp.reference.value else 0.0
        ok = (low is None or value >= low) and (high is None or value <= high)
        return ok, "" if ok else f"{value:g}{unit} is {deviation:+.1%} from the reference {exp.reference.value:g}{unit}"
    raise AssertionError(op)


def judge_one(exp: Expectation, step: StepEntry | None, fingerprint: Fingerprint | None) -> Judgement:
    expected = _expected_text(exp)

    def verdict(status: Word, observed: Any, reason: str) -> Judgement:
        return Judgement(exp.name, exp.step, status, expected, observed, reason, exp.why)

    fingerprint = fingerprint or Fingerprint()
    arches = fingerprint.gpu_arches
    gpu_reason = fingerprint.gpu_reason or "the fingerprint found no GPU"
    needs_arch = exp.when is not None or exp.operator == "equals_by_arch"
    if needs_arch:
        wanted = exp.when.gpu_arch if exp.when else list(exp.equals_by_arch or {})
        if not arches:
            return verdict(Word.INCONCLUSIVE, None, f"applies to {'/'.join(wanted)}; this host has no GPU ({gpu_reason})")
        if len(arches) > 1:
            return verdict(Word.INCONCLUSIVE, None, f"host mixes GPU architectures {arches}; judge one architecture at a time")
        if arches[0] not in wanted:
            names = sorted({"?" if d.name is None else d.name for d in fingerprint.devices})
            return verdict(Word.INCONCLUSIVE, None, f"applies to {'/'.join(wanted)}; this host has {arches[0]} ({', '.join(names)})")
    if step is None or step.result is None:
        reason = (step.reason if step else None) or "the step did not run"
        return verdict(Word.INCONCLUSIVE, None, f"step '{exp.step}' has no result: {reason}")
    result = step.result
    if result.get("status") not in (StepStatus.OK, StepStatus.CHECK_FAILED):
        return verdict(Word.INCONCLUSIVE, None, f"step '{exp.step}' reported {result.get('status')}: {result.get('error', '')}".rstrip(": "))
    try:
        values, expanded = resolve(exp.path, result)
    except PathMissing as missing:
        return verdict(Word.FAIL, None, f"the result of '{exp.step}' has no '{missing}' on the path {exp.path}")
    if expanded and not values:
        return verdict(Word.FAIL, [], f"no values at {exp.path}")
    arch = arches[0] if arches else None
    failures = []
    for value in values:
        if value is None:  # the workload's word for "could not tell here" (no torch to compare with, say)
            continue
        ok, detail = _compare(exp, value, arch)
        if not ok:
            failures.append(detail or f"observed {plain(value)}")
    observed = values if expanded else values[0]
    if failures:
        return verdict(Word.FAIL, observed, "; ".join(dict.fromkeys(failures)))
    if None in values:
        return verdict(Word.INCONCLUSIVE, observed, f"step '{exp.step}' could not tell {exp.path} here (null)")
    return verdict(Word.PASS, observed, "")


def judge(kit: Kit, steps: dict[str, StepEntry], fingerprint: Fingerprint | None) -> Verdict:
    """The run's verdict: FAIL if any expectation failed, else INCONCLUSIVE if any could not be judged, else PASS."""
    judgements = [judge_one(exp, steps.get(exp.step), fingerprint) for exp in kit.expect]
    statuses = {j.status for j in judgements}
    if not judgements:
        overall, summary = Word.INCONCLUSIVE, "the kit declares no expectations"
    elif Word.FAIL in statuses:
        overall = Word.FAIL
        summary = f"{sum(j.status == Word.FAIL for j in judgements)} of {len(judgements)} expectations did not hold"
    elif Word.INCONCLUSIVE in statuses:
        overall = Word.INCONCLUSIVE
        summary = f"{sum(j.status == Word.INCONCLUSIVE for j in judgements)} of {len(judgements)} expectations could not be judged here"
    else:
        overall, summary = Word.PASS, f"all {len(judgements)} expectations held"
    describes = None if kit.expect_describes == Describes.BUG else kit.expect_describes.value
    return Verdict(overall, summary, judgements, describes)
