"""``report.html``: the run's report for a browser, in one self-contained file.

Verdict first, then the expectations (the data of ``report.md``), the
environment, and a section per step that produced a result: shared memory per
kernel against the SM90/SM100/SM120 capacities, the sweep's roofline, the
autotune failures and the warmup timeline, GPU telemetry; last, a link to
every raw artifact of the record. CSS and SVG charts are inline, there is no
script, and a Content-Security-Policy forbids every load, so the file opens
anywhere (a CI artifact, an air-gapped laptop) and asks nothing of the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from reprokit.records.atomic import write_text_atomic
from reprokit.records.run import MANIFEST, RunRecord
from reprokit.report import charts, headline, serve, triton_smem
from reprokit.report.reasons import refer, shared_reasons
from reprokit.report.svg import esc, is_number

REPORT_HTML = "report.html"
VERDICT_CLASS = {"PASS": "pass", "FAIL": "fail", "INCONCLUSIVE": "inconclusive"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1d232a; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d5dbe1; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.mono, code, td.mono { font-family: "DejaVu Sans Mono", ui-monospace, monospace; font-size: 12px; }
.verdict { font-size: 18px; padding: 12px 16px; border-radius: 6px; border-left: 8px solid; margin: 8px 0 12px; }
.verdict.pass { background: #e8f5e9; border-color: #2e7d32; } .verdict.pass strong { color: #2e7d32; }
.verdict.fail { background: #ffebee; border-color: #c62828; } .verdict.fail strong { color: #c62828; }
.verdict.inconclusive { background: #fff8e1; border-color: #b26a00; } .verdict.inconclusive strong { color: #b26a00; }
.verdict.other { background: #eceff1; border-color: #546e7a; }
.meta { color: #546e7a; } .note { color: #6b5a00; background: #fffbe6; padding: 6px 10px; border-radius: 4px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid #d5dbe1; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f7; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { max-width: 420px; overflow-wrap: anywhere; }
.status-PASS, .yes { color: #2e7d32; font-weight: 600; } .status-FAIL, .no { color: #c62828; font-weight: 600; }
.status-INCONCLUSIVE { color: #b26a00; font-weight: 600; }
tr.drift td { background: #fff3e0; }
figure { margin: 10px 0 18px; } figcaption { color: #546e7a; font-size: 12px; max-width: 900px; }
svg.chart { display: block; font-size: 11px; }
svg .grid { stroke: #e3e7eb; } svg .tick, svg .axis-label, svg .legend-label { fill: #546e7a; }
svg .row-label { fill: #1d232a; font-size: 11px; } svg .value { fill: #37474f; font-size: 10px; }
svg .value.inside { fill: #fff; }
svg .note { fill: #8d6e63; font-style: italic; } svg .chart-title { font-weight: 600; fill: #1d232a; }
svg .bar.fits { fill: #4a78b5; } svg .bar.over { fill: #c62828; }
svg .capacity { stroke: #37474f; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .capacity.target { stroke: #c62828; stroke-width: 2; }
svg .capacity-label { fill: #37474f; font-weight: 600; } svg .target-label { fill: #c62828; }
svg .decode { fill: #1f77b4; } svg .prefill { fill: #e6821e; } svg .other { fill: #90a4ae; }
svg .reference { stroke: #37474f; stroke-dasharray: 4 3; } svg .reference.target { stroke: #2e7d32; }
svg .reference-label { fill: #37474f; font-size: 10px; } svg .reference.limit { stroke: #c62828; }
svg .roof { fill: none; stroke: #37474f; stroke-width: 2; }
svg .point { stroke: #fff; stroke-width: 1; }
svg .span.bad { fill: #c62828; } svg .span.good { fill: #2e7d32; } svg .span.neutral { fill: #607d8b; }
svg .series { fill: none; stroke-width: 1.5; }
svg .window { fill: #fff3e0; } svg .window-label { fill: #b26a00; font-size: 10px; }
svg .p0 { fill: #1f77b4; } svg .p1 { fill: #e6821e; } svg .p2 { fill: #2ca02c; }
svg .l0 { fill: #1f77b4; } svg .l1 { fill: #e6821e; } svg .l2 { fill: #2ca02c; }
.description { font-style: italic; color: #37474f; } td.why { color: #546e7a; font-size: 12px; }
svg .s0 { stroke: #1f77b4; } svg .s1 { stroke: #e6821e; } svg .s2 { stroke: #2ca02c; } svg .s3 { stroke: #d62728; }
svg .s4 { stroke: #9467bd; } svg .s5 { stroke: #8c564b; } svg .s6 { stroke: #e377c2; } svg .s7 { stroke: #7f7f7f; }
.smallmultiples { display: flex; flex-wrap: wrap; gap: 8px 24px; }
.swatch { display: inline-block; width: 18px; height: 4px; margin: 0 4px 3px 12px; vertical-align: middle; }
.sw0 { background: #1f77b4; } .sw1 { background: #e6821e; } .sw2 { background: #2ca02c; } .sw3 { background: #d62728; }
.sw4 { background: #9467bd; } .sw5 { background: #8c564b; } .sw6 { background: #e377c2; } .sw7 { background: #7f7f7f; }
"""


def write_html_report(run_dir: Path, manifest: dict[str, Any], verdict: dict[str, Any], steps: dict[str, dict[str, Any]]) -> Path:
    """Write ``run_dir/report.html`` and return its path.

    The runner calls this before the manifest lists the artifacts' hashes, so
    when the manifest has none yet they are computed here the way the record
    computes them (``RunRecord.hash_artifacts``).
    """
    artifacts = manifest.get("artifacts") or RunRecord(run_dir.parent, run_dir.name, manifest).hash_artifacts()
    artifacts = {rel: meta for rel, meta in artifacts.items() if rel != REPORT_HTML}
    path = run_dir / REPORT_HTML
    write_text_atomic(path, render_html(manifest, verdict, steps, artifacts))
    return path


def step_result(steps: dict[str, dict[str, Any]], uses: str) -> dict[str, Any] | None:
    """The result of the first step of kind ``uses`` that produced one."""
    for entry in steps.values():
        if entry.get("uses") == uses and isinstance(entry.get("result"), dict):
            return entry["result"]
    return None


def render_html(manifest: dict[str, Any], verdict: dict[str, Any], steps: dict[str, dict[str, Any]],
                artifacts: dict[str, dict[str, Any]]) -> str:
    kit = (manifest.get("kit") or {}).get("name", "?")
    host = (manifest.get("host") or {}).get("name", "?")
    word = str(verdict.get("verdict", "?"))
    notes, reasons = shared_reasons(verdict.get("expectations") or [], manifest.get("fingerprint"), steps)
    body = [
        f"<h1>{esc(kit)} on {esc(host)}: {esc(word)}</h1>",
        f'<p class="verdict {VERDICT_CLASS.get(word, "other")}" id="verdict"><strong>{esc(word)}</strong>: '
        f"{esc(verdict.get('summary', ''))}.</p>",
        f'<p class="meta">Run <code>{esc(manifest.get("run_id"))}</code>, started {esc(manifest.get("started"))}, '
        f"reprokit {esc((manifest.get('reprokit') or {}).get('version'))}{esc(_source(manifest))}.</p>",
        *_description(manifest),
        *_drift_note(manifest),
        *_headline(step_result(steps, "static-smem")),
        *_expectations(verdict, notes, reasons),
        *_serve(step_result(steps, "serve"), step_result(steps, "triage")),
        *triton_smem.html(steps, _table, esc),
        *_environment(manifest, notes),
        *_steps_table(steps, notes),
        *_probe(step_result(steps, "smem-probe")),
        *_static_smem(step_result(steps, "static-smem")),
        *_sweep(step_result(steps, "tile-sweep")),
        *_triage(step_result(steps, "triage")),
        *_artifacts(artifacts),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(kit)} on {esc(host)}: {esc(word)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body) + "\n</body></html>\n"
    )


# -- building blocks -----------------------------------------------------------------------------

def _table(headers: list[str] | None, rows: list[list[Any]], table_id: str | None = None, row_classes: list[str] | None = None) -> str:
    """Cells are escaped text, or ``(text, class)`` pairs."""
    head = f"<thead><tr>{''.join(f'<th>{esc(h)}</th>' for h in headers)}</tr></thead>" if headers else ""
    body = []
    for index, row in enumerate(rows):
        cells = []
        for cell in row:
            text, cls = cell if isinstance(cell, tuple) else (cell, "")
            cls_attr = f' class="{esc(cls)}"' if cls else ""
            cells.append(f"<td{cls_attr}>{esc('' if text is None else text)}</td>")
        row_cls = row_classes[index] if row_classes and row_classes[index] else ""
        body.append(f'<tr class="{esc(row_cls)}">' + "".join(cells) + "</tr>" if row_cls else "<tr>" + "".join(cells) + "</tr>")
    id_attr = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{id_attr}>{head}<tbody>{''.join(body)}</tbody></table>"


def _figure(svg: str, caption: str) -> list[str]:
    return [f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"] if svg else []


def _bytes(value: Any) -> Any:
    return charts.grouped_bytes(value) if is_number(value) else value


def _drift_note(manifest: dict[str, Any]) -> list[str]:
    drift = manifest.get("pin_drift") or {}
    if not drift:
        return []
    runtime = (manifest.get("host") or {}).get("runtime")
    text = "; ".join(f"{k} pinned {v.get('pinned')}, installed {v.get('installed')}" for k, v in drift.items())
    return [f'<p class="note">Pins differ from what ran: {esc(text)} (runtime {esc(runtime)}: the host\'s own packages ran).</p>']


def _source(manifest: dict[str, Any]) -> str:
    source = manifest.get("source") or {}
    text = f", git {str(source['git_commit'])[:12]}" + (" (with local changes)" if source.get("git_dirty") else "") \
        if source.get("git_commit") else ""
    return text + (f", CI run {source['ci_run_url']}" if source.get("ci_run_url") else "")


def _description(manifest: dict[str, Any]) -> list[str]:
    description = (manifest.get("kit") or {}).get("description")
    return [f'<p class="description" id="kit-description">{esc(" ".join(str(description).split()))}</p>'] if description else []


def _expectations(verdict: dict[str, Any], notes: list, reasons: dict[str, str]) -> list[str]:
    rows = [[j.get("name"), j.get("step"), (j.get("status"), f"status-{j.get('status')}"), j.get("expected"),
             (j.get("observed"), "wrap mono"), (reasons.get(str(j.get("name")), j.get("reason")), "wrap"),
             (j.get("why"), "wrap why")]
            for j in verdict.get("expectations") or []]
    headers = ["expectation", "step", "status", "expected", "observed", "reason", "why"]
    if not any(j.get("why") for j in verdict.get("expectations") or []):
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    out = ["<h2>Expectations</h2>", _table(headers, rows, "expectations")]
    if notes:
        out.append('<ul id="shared-reasons">' + "".join(
            f'<li id="note-{n.number}"><strong>note {n.number}</strong>, {esc(n.sentence())}</li>' for n in notes) + "</ul>")
    return out


def _headline(result: dict[str, Any] | None) -> list[str]:
    """Each failing kernel's bytes against the limit, and the chart drawn against the limit."""
    if result is None or result.get("status") not in (None, "ok"):
        return []
    explanation = headline.no_kernels_explanation(result)
    if explanation:
        return []  # said in the static-smem section
    rows = headline.accounting_rows(result)
    limit = charts.smem_target_capacity(result)
    out = [f'<h2 id="headline">Shared memory on {esc(result.get("arch"))}: {len(rows)} kernel(s) over the '
           f"{esc(_bytes(limit))} B limit</h2>"]
    if rows:
        out.append(_table(headline.ACCOUNTING_HEADERS, [[(c, "num" if i else "mono") for i, c in enumerate(r)] for r in rows],
                          "smem-accounting"))
    out += _figure(headline.headroom_chart(result),
                   "The kernels nearest the limit, each bar from the limit to the kernel's SharedStorage: red ones are over "
                   "and fail at initialisation; the axis spans only these kernels, so 1 KiB is wide.")
    return out


def _environment(manifest: dict[str, Any], notes: list) -> list[str]:
    fp = manifest.get("fingerprint") or {}
    host = manifest.get("host") or {}
    machine = fp.get("host") or {}
    driver = fp.get("driver") or {}
    out = ["<h2>Environment</h2>", _table(None, [
        ["host", f"{host.get('name')} ({host.get('connection')}, runtime {host.get('runtime')})"],
        ["machine", f"{machine.get('machine')} {machine.get('kernel')}, Python {machine.get('python')}"],
        ["driver", driver.get("driver_release") if driver else f"none: {refer(fp.get('gpu_reason'), notes)}"],
        ["CUDA driver API", driver.get("cuda_driver_api")],
        ["nvcc", fp.get("nvcc")],
    ], "environment")]
    devices = [d for d in fp.get("devices") or [] if isinstance(d, dict)]
    if devices:
        out += ["<h3>GPUs</h3>", _table(
            ["#", "name", "arch", "SMs", "smem/block (B)", "smem/block opt-in (B)", "smem/SM (B)"],
            [[d.get("index"), d.get("name"), d.get("gpu_arch"), (d.get("multiprocessor_count"), "num"),
              (_bytes(d.get("max_shared_memory_per_block_bytes")), "num"),
              (_bytes(d.get("max_shared_memory_per_block_optin_bytes")), "num"),
              (_bytes(d.get("max_shared_memory_per_multiprocessor_bytes")), "num")] for d in devices], "gpus")]
    pins = manifest.get("pins") or {}
    installed = fp.get("packages") or {}
    drift = manifest.get("pin_drift") or {}
    names = list(pins) + [n for n in installed if n not in pins and installed.get(n)]
    if names:
        out += ["<h3>Packages</h3>", _table(
            ["package", "pinned", "on the host", ""],
            [[name, pins.get(name), installed.get(name) if name in installed else "(not inspected)",
              "pin drift" if name in drift else ""] for name in names],
            "packages", ["drift" if name in drift else "" for name in names])]
    return out


def _steps_table(steps: dict[str, dict[str, Any]], notes: list) -> list[str]:
    rows = [[e.get("name"), e.get("uses"), e.get("status"), (e.get("duration_s"), "num"),
             (refer(e.get("reason"), notes, step=e.get("name")), "wrap"), e.get("log")] for e in steps.values()]
    return ["<h2>Steps</h2>", _table(["step", "uses", "status", "duration (s)", "detail", "log"], rows, "steps")]


def _probe(result: dict[str, Any] | None) -> list[str]:
    rows = []
    for device in (result or {}).get("devices") or []:
        for label in ("launch_at_optin_limit", "launch_past_optin_limit"):
            launch = device.get(label) if isinstance(device, dict) else None
            if isinstance(launch, dict):
                rows.append([device.get("index"), (_bytes(launch.get("dynamic_shared_bytes")), "num"),
                             ("ok", "yes") if launch.get("ok") else ("refused", "no"),
                             launch.get("set_attribute_error_name"), launch.get("error_name"), launch.get("error_string")])
    if not rows:
        return []
    return ["<h2>SMEM probe launches</h2>", _table(
        ["GPU", "dynamic smem (B)", "launch", "cuFuncSetAttribute", "launch error", "driver says"], rows, "probe-launches")]


def _static_smem(result: dict[str, Any] | None) -> list[str]:
    if result is None:
        return []
    out = ['<h2 id="static-smem">Shared memory per kernel (static analysis)</h2>']
    if result.get("status") not in (None, "ok"):
        out.append(f'<p class="note">static-smem {esc(result.get("status"))}: {esc(result.get("error", ""))}</p>')
    explanation = headline.no_kernels_explanation(result)
    if explanation:
        return out + [f'<p class="note" id="no-kernels">{esc(explanation)}</p>']
    failing, fitting = result.get("failing_tiles") or [], result.get("fitting_tiles") or []
    out.append(f"<p>FlashInfer {esc(result.get('flashinfer'))}, {esc(result.get('dtype', ''))} on "
               f"<strong>{esc(result.get('arch'))}</strong>, judged against {esc(result.get('capacity_symbol', 'capacity'))} = "
               f"{esc(_bytes(charts.smem_target_capacity(result)))} B. "
               f'Failing tiles: <strong class="no">{esc(", ".join(failing) or "none")}</strong>; '
               f'fitting tiles: <span class="yes">{esc(", ".join(fitting) or "none")}</span>.'
               + (f" Not dispatchable: {esc(', '.join(result['unsupported_tiles']))}." if result.get("unsupported_tiles") else "")
               + "</p>")
    out += _figure(charts.smem_chart(result),
                   f"Each bar is one tactic and output type: sizeof(GemmKernel::SharedStorage) of the kernel compiled for "
                   f"{result.get('arch')}. Red bars exceed {result.get('arch')}'s capacity; such a kernel fails at "
                   "initialisation (cudaFuncSetAttribute, 'Error Internal'). Dashed lines: the per-block capacities of "
                   "SM90, SM100 and SM120. Hover a bar for the builder's stage arithmetic.")
    return out


def _sweep(result: dict[str, Any] | None) -> list[str]:
    if result is None:
        return []
    out = ['<h2 id="tile-sweep">Tile sweep: throughput against the roofline</h2>']
    roofline = result.get("roofline") or {}
    device = result.get("device") or {}
    ceilings = []
    if is_number(roofline.get("copy_gbps")):
        ceilings.append(f"copy {roofline['copy_gbps']:.0f} GB/s (read + write)")
    if is_number(roofline.get("read_gbps")):
        ceilings.append(f"read {roofline['read_gbps']:.0f} GB/s")
    if is_number(roofline.get("dense_gemm_tflops")):
        ceilings.append(f"dense bf16 GEMM {roofline['dense_gemm_tflops']:.0f} TFLOP/s")
    where = f" on {device.get('name')} ({device.get('gpu_arch')})" if device.get("name") else ""
    out.append(f'<p id="ceilings">Ceilings measured in this run{esc(where)}: {esc(", ".join(ceilings) or "none recorded")}.</p>')
    out += _figure(charts.sweep_roofline_chart(result),
                   "Best tile of each problem: achieved TFLOP/s against its arithmetic intensity (FLOP per byte of the "
                   "least traffic the problem needs), under the roof of the two ceilings above.")
    out += _figure(charts.sweep_fraction_chart(result),
                   "Fraction of the roofline (the slower of compute at the GEMM ceiling and traffic at copy bandwidth) "
                   "reached by the best tile of each problem.")
    rows = []
    for entry in result.get("best") or []:
        if not isinstance(entry, dict):
            continue
        time_s, fraction = entry.get("time_median_s"), entry.get("fraction_of_roofline")
        rows.append([entry.get("problem"), entry.get("phase"), (entry.get("config") or entry.get("reason"), "mono"),
                     (f"{time_s * 1e6:.1f}" if is_number(time_s) else "", "num"),
                     (f"{entry['tflops']:.1f}" if is_number(entry.get("tflops")) else "", "num"),
                     (f"{entry['gbps']:.0f}" if is_number(entry.get("gbps")) else "", "num"),
                     entry.get("bound"), (f"{fraction:.0%}" if is_number(fraction) else "", "num")])
    if rows:
        out += ["<h3>Best tile per problem</h3>", _table(
            ["problem", "phase", "best config", "time (us)", "TFLOP/s", "GB/s", "bound", "of roofline"], rows, "best-tiles")]
    return out


def _triage(result: dict[str, Any] | None) -> list[str]:
    if result is None:
        return []
    out = ['<h2 id="triage">Server log triage</h2>',
           f"<p><strong>{esc(result.get('verdict'))}</strong>: {esc(result.get('reason', ''))}</p>"]
    if result.get("hint"):
        out.append(f'<p class="note">{esc(result["hint"])}</p>')
    rows = []
    for failure in result.get("autotune_failures") or []:
        if not isinstance(failure, dict):
            continue
        ranks = failure.get("ranks") or []
        rows.append([str(failure.get("op") or "").rsplit("::", 1)[-1], (failure.get("tactic"), "num"),
                     (failure.get("tile"), "mono"), failure.get("fusion"),
                     "yes" if failure.get("swap_ab") else "no" if failure.get("swap_ab") is not None else "",
                     (failure.get("count"), "num"), ", ".join(map(str, ranks)) or "not logged",
                     failure.get("first"), failure.get("last")])
    if rows:
        total = sum(f.get("count") or 0 for f in result["autotune_failures"] if isinstance(f, dict))
        out += [f"<h3>Autotune failures: {len(rows)} tactic(s), {total} failure line(s)</h3>", _table(
            ["op", "tactic", "tile", "fusion", "swap_ab", "count", "ranks", "first", "last"], rows, "autotune-failures")]
    fatal = result.get("fatal")
    if isinstance(fatal, dict):
        out.append(f'<p class="note">Fatal ({esc(fatal.get("kind"))}) at {esc(fatal.get("at"))}: {esc(fatal.get("message"))}</p>')
    out += _figure(charts.timeline_chart(result),
                   "Warmup and autotuning as the server logged them: each event from its first to its last line (all ranks), "
                   "autotune failures in red, readiness in green.")
    return out


def _serve(result: dict[str, Any] | None, triage: dict[str, Any] | None) -> list[str]:
    """Time to ready, warmup phases, findings, throughput and latency per concurrency, then the GPU telemetry."""
    if result is None:
        return []
    ready = result.get("ready_after_s")
    out = ['<h2 id="serve">Serving</h2>',
           f'<p id="serve-outcome">Outcome <strong>{esc(result.get("outcome", "?"))}</strong>'
           + (f", ready after {ready:g} s" if is_number(ready) else "") + ".</p>"]
    phases = serve.warmup_phases(triage)
    if phases:
        out.append(_table(["warmup phase", "from (s)", "to (s)", "duration (s)"],
                          [[p["phase"], (f"{p['start_s']:.0f}", "num"), (f"{p['end_s']:.0f}", "num"),
                            (f"{p['duration_s']:.0f}", "num")] for p in phases], "warmup-phases"))
    texts = serve.serve_findings(result)
    if texts:
        out.append('<h3>Findings</h3><ul id="serve-findings">' + "".join(f"<li>{esc(t)}</li>" for t in texts) + "</ul>")
    perf = serve.serve_performance(result)
    if serve.rows(perf):
        out.append('<div class="smallmultiples">' + serve.throughput_chart(perf) + serve.latency_chart(perf) + "</div>")
        out.append(_table(serve.TABLE_HEADERS, [[(c, "num") for c in r] for r in serve.table_rows(perf)], "serve-performance"))
    return out + _telemetry(result)


def _telemetry(result: dict[str, Any] | None) -> list[str]:
    """The serve step's ``telemetry``: ``{available, error, interval_s, per_gpu, samples}`` (a bare list of samples works too)."""
    telemetry = (result or {}).get("telemetry")
    rendered = charts.telemetry_charts(telemetry, serve.bench_windows(result))
    if not rendered:
        error = telemetry.get("error") if isinstance(telemetry, dict) else None
        return ['<h2 id="telemetry">GPU telemetry</h2>', f'<p class="note">No telemetry samples: {esc(error)}</p>'] if error else []
    legend = "".join(f'<span class="swatch sw{index % 8}"></span>GPU {esc(gpu)}'
                     for index, gpu in enumerate(charts.telemetry_gpus(charts.telemetry_samples(telemetry))))
    out = ['<h2 id="telemetry">GPU telemetry during the benchmark</h2>', f'<p class="legend">{legend}</p>',
           '<div class="smallmultiples">' + "".join(rendered) + "</div>"]
    per_gpu = [g for g in (telemetry.get("per_gpu") if isinstance(telemetry, dict) else None) or [] if isinstance(g, dict)]
    if per_gpu:
        out.append(_table(["GPU", "samples", "max power (W)", "power limit (W)", "mean utilisation (%)"],
                          [[g.get("gpu"), (g.get("samples"), "num"), (g.get("max_power_w"), "num"),
                            (g.get("power_limit_w"), "num"), (g.get("mean_util_pct"), "num")] for g in per_gpu], "telemetry-per-gpu"))
    return out


def _artifacts(artifacts: dict[str, dict[str, Any]]) -> list[str]:
    rows = [f'<tr><td class="mono"><a href="{esc(quote(MANIFEST, safe="/"))}">{esc(MANIFEST)}</a></td>'
            '<td class="num"></td><td>the record\'s index: pins, fingerprint, steps and the sha256 of every file below</td></tr>']
    for rel, meta in sorted(artifacts.items()):
        meta = meta if isinstance(meta, dict) else {}
        rows.append(f'<tr><td class="mono"><a href="{esc(quote(rel, safe="/"))}">{esc(rel)}</a></td>'
                    f'<td class="num">{esc(_bytes(meta.get("bytes")))}</td><td class="mono">{esc(meta.get("sha256"))}</td></tr>')
    return ['<h2 id="artifacts">Artifacts</h2>',
            f"<p>{len(artifacts)} file(s) of this record, linked relative to this report.</p>",
            '<table id="artifact-links"><thead><tr><th>file</th><th>bytes</th><th>sha256</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>"]
