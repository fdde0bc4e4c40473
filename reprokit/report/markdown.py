"""``report.md``: verdict first, then the headline (bytes against the limit), every expectation, serving, the environment.

It becomes the CI job summary, so what a reader needs first comes first, and
no cell is cut: a reason many expectations share is said once, as a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reprokit.records.atomic import write_text_atomic
from reprokit.report import headline, serve, triton_smem
from reprokit.report.reasons import refer, shared_reasons

OBSERVED_CHARS = 120  # an observed value longer than this is shortened at a word or item boundary


def shorten(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, cut after a whole word or list item, never inside one."""
    if len(text) <= limit:
        return text
    cut = max(text.rfind(sep, 0, limit) for sep in (" ", ","))
    return (text[:cut] if cut > 0 else text[:limit]).rstrip(" ,") + " …"


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def render(manifest: dict[str, Any], verdict: dict[str, Any], steps: dict[str, dict[str, Any]]) -> str:
    fp = manifest.get("fingerprint") or {}
    host = manifest.get("host") or {}
    lines = [
        f"# {manifest['kit']['name']} on {host.get('name')}: {verdict['verdict']}",
        "",
        f"**{verdict['verdict']}**: {verdict['summary']}.",
        "",
        f"Run `{manifest['run_id']}`, started {manifest['started']}, reprokit {manifest['reprokit']['version']}"
        + _source(manifest) + ".",
        "",
    ]
    description = (manifest.get("kit") or {}).get("description")
    if description:
        lines += [f"> {' '.join(str(description).split())}", ""]
    drift = manifest.get("pin_drift") or {}
    if drift:
        lines += [
            "> Pins differ from what ran: "
            + "; ".join(f"{k} pinned {v['pinned']}, installed {v['installed']}" for k, v in drift.items())
            + f" (runtime {host.get('runtime')}: the host's own packages ran).",
            "",
        ]
    lines += headline.markdown(_result(steps, "static-smem"), _table)
    lines += ["", "## Expectations", ""]
    notes, reasons = shared_reasons(verdict["expectations"], fp, steps)
    with_why = any(j.get("why") for j in verdict["expectations"])
    lines += _table(
        ["expectation", "step", "status", "expected", "observed", "reason"] + (["why"] if with_why else []),
        [[j["name"], j["step"], j["status"], j["expected"],
          shorten(str(j["observed"]), OBSERVED_CHARS) if j["observed"] is not None else "", reasons.get(j["name"], j["reason"])]
         + ([j.get("why", "")] if with_why else []) for j in verdict["expectations"]],
    )
    if notes:
        lines += [""] + [f"- **note {n.number}**, {n.sentence()}" for n in notes]
    lines += serve.markdown(_result(steps, "serve"), _result(steps, "triage"), _table)
    lines += triton_smem.markdown(steps, _table)
    lines += ["", "## Environment", ""]
    driver = fp.get("driver") or {}
    env_rows = [
        ["host", f"{host.get('name')} ({host.get('connection')}, runtime {host.get('runtime')})"],
        ["machine", f"{(fp.get('host') or {}).get('machine')} {(fp.get('host') or {}).get('kernel')}, Python {(fp.get('host') or {}).get('python')}"],
        ["driver", f"{driver.get('driver_release')} (CUDA driver API {driver.get('cuda_driver_api')})" if driver
         else f"none: {refer(fp.get('gpu_reason'), notes)}"],
        ["nvcc", fp.get("nvcc")],
        ["pins", ", ".join(f"{k} {v}" for k, v in (manifest.get("pins") or {}).items())],
        ["installed", ", ".join(f"{k} {v}" for k, v in (fp.get("packages") or {}).items() if v) or "(none of the pinned packages)"],
    ]
    lines += _table(["", ""], env_rows)
    devices = fp.get("devices") or []
    if devices:
        lines += ["", "### GPUs", ""]
        lines += _table(
            ["#", "name", "arch", "SMs", "smem/block", "smem/block opt-in", "smem/SM"],
            [
                [d["index"], d["name"], d["gpu_arch"], d["multiprocessor_count"], d["max_shared_memory_per_block_bytes"],
                 d["max_shared_memory_per_block_optin_bytes"], d["max_shared_memory_per_multiprocessor_bytes"]]
                for d in devices
            ],
        )
    lines += ["", "## Steps", ""]
    lines += _table(
        ["step", "uses", "status", "duration (s)", "detail", "log"],
        [[e["name"], e["uses"], e["status"], e.get("duration_s"), refer(e.get("reason"), notes, step=e.get("name")), e.get("log")]
         for e in steps.values()],
    )
    probe = next((e["result"] for e in steps.values() if e["uses"] == "smem-probe" and e.get("result")), None)
    if probe and probe.get("devices"):
        lines += ["", "## SMEM probe launches", ""]
        rows = []
        for d in probe["devices"]:
            for label in ("launch_at_optin_limit", "launch_past_optin_limit"):
                launch = d[label]
                rows.append([d["index"], launch["dynamic_shared_bytes"], "ok" if launch.get("ok") else "refused",
                             launch.get("set_attribute_error_name"), launch.get("error_name"), launch.get("error_string")])
        lines += _table(["GPU", "dynamic smem (B)", "launch", "cuFuncSetAttribute", "launch error", "driver says"], rows)
    lines += ["", "## Artifacts", "", "Every file of this record is listed with its sha256 in `manifest.json`.", ""]
    return "\n".join(lines)


def _result(steps: dict[str, dict[str, Any]], uses: str) -> dict[str, Any] | None:
    return next((e["result"] for e in steps.values() if e.get("uses") == uses and isinstance(e.get("result"), dict)), None)


def _source(manifest: dict[str, Any]) -> str:
    source = manifest.get("source") or {}
    text = f", git {str(source['git_commit'])[:12]}" + (" (with local changes)" if source.get("git_dirty") else "") \
        if source.get("git_commit") else ""
    return text + (f", CI run {source['ci_run_url']}" if source.get("ci_run_url") else "")


def write_report(run_dir: Path, manifest: dict[str, Any], verdict: dict[str, Any], steps: dict[str, dict[str, Any]]) -> Path:
    path = run_dir / "report.md"
    write_text_atomic(path, render(manifest, verdict, steps))
    return path
