"""Front ends of ``invoke fix`` and ``invoke fit-table``: arguments in, files and a short text out."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from reprokit.errors import ConfigError, ExitCode
from reprokit.fix import fit_table
from reprokit.fix.plan import fix_plan, kit_stack
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.static_smem.targets import ARCHES, DTYPES


def fix_cli(kit: str | None, flashinfer: str | None, arch: str | None, dtype: str, sglang: str | None,
            gpu: str | None, out: str | None, as_json: bool, kits_dir: str = "kits", vllm: str | None = None) -> int:
    """Print (and with ``out`` write) what keeps the failing tactics from being tried; 0 unless something failed."""
    if kit:
        from reprokit.config.kit import load_kit

        loaded, path = load_kit(kit, kits_dir)
        kit_flashinfer, kit_arch, kit_sglang = kit_stack(loaded, path)
        flashinfer, arch, sglang = flashinfer or kit_flashinfer, arch or kit_arch, sglang or kit_sglang
    if not flashinfer:
        raise ConfigError("invoke fix: give --kit KIT, or --flashinfer VERSION (with --arch and --sglang)")
    arch = arch or "sm120"
    if arch not in ARCHES:
        raise ConfigError(f"--arch {arch!r}: not analysed; known: {', '.join(ARCHES)}")
    if dtype not in DTYPES:
        raise ConfigError(f"--dtype {dtype!r}: not analysed; known: {', '.join(DTYPES)}")
    plan = fix_plan(flashinfer, arch, dtype, sglang, gpu, out_dir=Path(out) if out else None, vllm=vllm)
    if as_json:
        print(json.dumps(plan, indent=2))
        return ExitCode.PASS
    print(plan["summary"])
    for knob in plan["knobs"]:
        mark = "use" if knob["name"] == plan["recommended"] else ("ok " if knob["applies"] else "no ")
        what = " ".join(knob.get("flags") or []) or " ".join(f"{k}={v}" for k, v in (knob.get("env") or {}).items())
        detail = knob["cost"] if knob["applies"] else knob.get("why_not", "")
        print(f"  [{mark}] {knob['name']}: {what}\n        {detail}")
        if knob.get("verified"):
            print(f"        verified: {knob['verified']['with']}: {knob['verified']['log'][0] if knob['verified']['log'] else ''}")
        if knob.get("checked_against") and knob["applies"]:
            print(f"        checked against {knob['checked_against']}")
    if out:
        print(f"written: {Path(out) / 'fix.json'}" + (f", {Path(out) / 'tactics-blocklist.json'}"
                                                       if any(k.get('file') for k in plan['knobs']) else ""))
    else:
        blocklist = next((k.get("document") for k in plan["knobs"] if k.get("document")), None)
        if blocklist:
            print(f"blocklist (write it with --out DIR):\n{json.dumps(blocklist, indent=2)}")
    return ExitCode.PASS


def fit_table_cli(versions: str | None, arch: str, dtype: str, jobs: int | None, refresh: bool, docs_only: bool) -> int:
    """Regenerate the fit table (cached per wheel) and its docs page."""
    if not docs_only:
        from reprokit.bisect import available_versions

        chosen = versions.split(",") if versions else fit_table.table_releases(available_versions())
        unknown = [a for a in arch.split(",") if a not in ARCHES]
        if unknown:
            raise ConfigError(f"--arch {','.join(unknown)}: not analysed; known: {', '.join(ARCHES)}")
        started = time.monotonic()
        computed = {"cells_computed": 0, "computed_s": 0.0}
        for spec in fit_table.cell_specs(arch, dtype):
            done = fit_table.generate(chosen, [spec[0]], [spec[1]], wheels.default_cache_dir(), jobs, refresh=refresh,
                                      log=lambda line: print(line, file=sys.stderr, flush=True))
            for key in computed:
                computed[key] += done["generation"][key]
        table = fit_table.load()
        table["generation"] = {**computed, "computed_s": round(computed["computed_s"], 1),
                               "wall_s": round(time.monotonic() - started, 1), "refresh": refresh}
        fit_table.write(table)
    table = fit_table.load()
    fit_table.DOCS_PAGE.write_text(fit_table.render_markdown(table))
    print(f"fit table: {len(table['cells'])} cells in {fit_table.DATA_FILE}; page {fit_table.DOCS_PAGE}")
    return ExitCode.PASS
