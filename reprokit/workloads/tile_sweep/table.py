"""``table.txt``: the sweep's result for people, rendered from result.json's body alone."""

from __future__ import annotations

from typing import Any

_OUTCOME_MARK = {"out_of_resources": "OOR", "failed": "ERR", "wrong_result": "WRONG", "skipped": "skip"}


def _fmt_bytes(value: Any) -> str:
    return "-" if value is None else str(value)


def _fits(value: Any) -> str:
    return {True: "yes", False: "NO", None: "?"}[value]


def _grid(header: list[str], lines: list[list[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)] if lines else [len(h) for h in header]
    out = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)) for line in lines]
    return out


def render(body: dict[str, Any]) -> str:
    """The sweep's result as the text table a person reads on the host (``table.txt``)."""
    out = _heading(body)
    configs = body.get("configs") or []
    rows = body.get("rows") or []
    for part in (_configs(configs, (body.get("device") or {}).get("gpu_arch")),
                 _fractions([r for r in rows if r.get("backend") == "triton"], body.get("problems") or [], configs),
                 _best([b for b in body.get("best") or [] if b.get("config")]),
                 _flashinfer([r for r in rows if r.get("backend") == "flashinfer"]),
                 _boundary([r for r in rows if r.get("backend") == "boundary"]),
                 _cross_check(body.get("cross_check") or {}, (body.get("device") or {}).get("gpu_arch")),
                 _notes(body.get("notes") or [])):
        out += part
    timing = body.get("timing") or {}
    if timing:
        out.append("Timing: " + ", ".join(f"{k} {v:.1f} s" for k, v in timing.items() if isinstance(v, (int, float))))
    return "\n".join(out) + "\n"


def _heading(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    device = body.get("device") or {}
    roof = body.get("roofline") or {}
    out.append(f"reprokit tile sweep: {body.get('model') or 'model'} on "
               f"{device.get('name', 'no GPU')} ({device.get('gpu_arch', '-')}, "
               f"{device.get('multiprocessor_count', '-')} SMs, opt-in {device.get('smem_optin_bytes', '-')} B per block)")
    if device.get("reason"):
        out.append(f"no device: {device['reason']}")
    if roof:
        out.append(f"roofline, measured in this run: copy {roof['copy_gbps']:.0f} GB/s (read+write),"
                   f" read {roof['read_gbps']:.0f} GB/s, dense bf16 GEMM {roof['dense_gemm_tflops']:.0f} TFLOP/s")
    out.append("")
    for name, section in (body.get("backends") or {}).items():
        out.append(f"backend {name}: {section.get('status')}" + (f" ({section['reason']})" if section.get("reason") else ""))
    out.append("")
    return out


def _configs(configs: list[dict[str, Any]], native: str | None) -> list[str]:
    if not configs:
        return []
    arches: list[str] = []
    for entry in configs:
        arches += [a for a in entry.get("compiled", {}) if a not in arches]
    out = ["Triton configurations: shared memory per block, compiled per target; fit against each target's opt-in limit"]
    header = ["config", "estimate B"]
    for arch in arches:
        header += [f"{arch} B", f"{arch} mma", f"fits {arch}"]
    header += ["driver grants", "launch"]
    lines = []
    for entry in configs:
        line = [entry["id"], str(entry.get("static_estimate_bytes"))]
        for arch in arches:
            report = entry.get("compiled", {}).get(arch, {})
            line += [_fmt_bytes(report.get("shared_bytes")), report.get("mma", "-") if report.get("ok") else "ERR",
                     _fits(entry.get("predicted_fits", {}).get(arch))]
        driver = entry.get("driver_optin", {})
        line.append({True: "yes", False: driver.get("error_name") or "NO", None: "-"}[driver.get("ok")])
        launch = entry.get("launch", {})
        line.append(launch.get("outcome", "-"))
        lines.append(line)
    return out + _grid(header, lines) + [""]


def _fractions(rows: list[dict[str, Any]], problems: list[dict[str, Any]], configs: list[dict[str, Any]]) -> list[str]:
    if not (rows and configs):
        return []
    out = ["Fraction of the roofline per problem and configuration (OOR: out of shared memory; ERR: failed;"
           " WRONG: wrong result; skip: not run)"]
    cell = {(r["problem"], r["config"]): r for r in rows}
    header = ["problem"] + [c["id"] for c in configs]
    lines = []
    for problem in problems:
        line = [problem["id"]]
        for entry in configs:
            row = cell.get((problem["id"], entry["id"]))
            if row is None:
                line.append("-")
            elif row["outcome"] == "ok":
                line.append(f"{row['fraction_of_roofline']:.2f}")
            elif row["outcome"] == "failed" and (row.get("error") or {}).get("class") == "out_of_resources":
                line.append("OOR")
            else:
                line.append(_OUTCOME_MARK.get(row["outcome"], row["outcome"]))
        lines.append(line)
    return out + _grid(header, lines) + [""]


def _best(best: list[dict[str, Any]]) -> list[str]:
    if not best:
        return []
    header = ["problem", "tokens/expert", "best config", "time us", "TFLOP/s", "GB/s", "bound", "of roofline",
              "of copy BW"]
    lines = [[b["problem"], str(b["tokens_per_expert"]), b["config"], f"{b['time_median_s'] * 1e6:.1f}",
              f"{b['tflops']:.1f}", f"{b['gbps']:.0f}", b["bound"], f"{b['fraction_of_roofline']:.0%}",
              f"{b['fraction_of_copy_bandwidth']:.0%}"] for b in best]
    return ["Best tile per problem"] + _grid(header, lines) + [""]


def _flashinfer(flash: list[dict[str, Any]]) -> list[str]:
    if not flash:
        return []
    lines = [[r["problem"], r["config"], r["outcome"], r.get("tile") or "-",
              ((r.get("error") or {}).get("class") or "-")] for r in flash]
    return ["FlashInfer CUTLASS MoE tactics"] + _grid(["problem", "tactic", "outcome", "tile", "error class"], lines) + [""]


def _boundary(boundary: list[dict[str, Any]]) -> list[str]:
    if not boundary:
        return []
    lines = [[r["config"], str(r.get("dynamic_shared_bytes")), r["outcome"],
              ((r.get("error") or {}).get("name") or "-")] for r in boundary]
    return ["Raw launches with dynamic shared memory"] + _grid(["case", "bytes", "outcome", "driver error"], lines) + [""]


def _cross_check(cross: dict[str, Any], native: str | None) -> list[str]:
    if not cross:
        return []
    out = [f"Cross-check: {cross.get('agreements')} of {cross.get('checked')} predictions agree with the device;"
           f" {len(cross.get('disagreements', []))} disagreements; {len(cross.get('unverified', []))} unverified"]
    for item in cross.get("disagreements", []):
        out.append(f"  DISAGREE {item['subject']} {item['check']}: predicted {item['predicted']},"
                   f" observed {item['observed']} ({item.get('basis', '')})")
    for arch, section in (cross.get("cross_arch") or {}).items():
        out.append(f"  on {arch} ({native} here): {len(section['does_not_fit_there'])} configs would not fit;"
                   f" of them run here: {', '.join(section['runs_here_but_not_there']) or 'none'}")
    return out + [""]


def _notes(notes: list[str]) -> list[str]:
    return ["Notes"] + [f"- {note}" for note in notes] + [""] if notes else []
