"""The shape of the sweep's result.json, checked by ``validate`` (used by the tests, CPU and GPU).

Top level: the contract's ``workload``/``schema_version``/``status`` plus the
keys below. Every row has ``backend``, ``config``, ``problem`` and
``outcome``; an ``ok`` Triton row carries the measurement, a ``failed`` row
its classified error, a ``skipped`` row its reason.
"""

from __future__ import annotations

from typing import Any

TOP_KEYS = ("workload", "schema_version", "status", "model_config", "params", "device", "problems", "roofline",
            "backends", "configs", "rows", "cross_check", "best", "headline", "notes", "timing")
OUTCOMES = ("ok", "failed", "wrong_result", "skipped")
ROW_KEYS = ("backend", "config", "problem", "outcome")
MEASURED_KEYS = ("rel_error", "correct", "time_median_s", "tflops", "gbps", "bound", "fraction_of_roofline",
                 "fraction_of_copy_bandwidth", "fraction_of_gemm_peak")
CROSS_CHECK_KEYS = ("checked", "agreements", "disagreements", "unverified", "cross_arch", "items")
ROOFLINE_KEYS = ("copy_gbps", "read_gbps", "dense_gemm_tflops")


def validate(result: dict[str, Any]) -> list[str]:
    """Every way ``result`` departs from the schema; empty when it conforms."""
    problems = [f"missing top-level key {key!r}" for key in TOP_KEYS if key not in result]
    if result.get("workload") != "sweep":
        problems.append(f"workload is {result.get('workload')!r}, not 'sweep'")
    roof = result.get("roofline") or {}
    if roof:
        problems += [f"roofline lacks {key}" for key in ROOFLINE_KEYS if not isinstance(roof.get(key), (int, float))]
    for index, row in enumerate(result.get("rows") or []):
        where = f"rows[{index}]"
        problems += [f"{where} lacks {key}" for key in ROW_KEYS if key not in row]
        outcome = row.get("outcome")
        if outcome not in OUTCOMES:
            problems.append(f"{where}: outcome {outcome!r} not one of {OUTCOMES}")
        if row.get("backend") == "triton" and outcome in ("ok", "wrong_result"):
            problems += [f"{where} ({outcome}) lacks {key}" for key in MEASURED_KEYS if key not in row]
        if outcome == "failed" and not (row.get("error") or {}).get("class"):
            problems.append(f"{where}: failed without a classified error")
        if outcome == "skipped" and not row.get("skip_reason"):
            problems.append(f"{where}: skipped without a reason")
    cross = result.get("cross_check") or {}
    problems += [f"cross_check lacks {key}" for key in CROSS_CHECK_KEYS if key not in cross]
    if not isinstance(cross.get("disagreements"), list):
        problems.append("cross_check.disagreements is not a list")
    for name, section in (result.get("backends") or {}).items():
        if section.get("status") not in ("ran", "skipped", "failed"):
            problems.append(f"backends.{name}.status is {section.get('status')!r}")
        if section.get("status") == "skipped" and not section.get("reason"):
            problems.append(f"backends.{name} skipped without a reason")
    return problems
