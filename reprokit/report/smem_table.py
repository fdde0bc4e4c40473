"""The static shared-memory result (workload ``static-smem``) as a table people can read.

One line per tactic; when a tactic's kernels for several output types have the
same sizes (they do on SM120: bf16 and f16 are both 16-bit), they share a line.
Under the table: the failing tiles, why each failing kernel does not fit, and
what the numbers were compiled from. The result is read as the kind's model
(``reprokit/step_kinds/static_smem.py``), by field.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from reprokit.report.kind_sections.static_smem import no_kernels_explanation
from reprokit.step_kinds import given
from reprokit.step_kinds.static_smem import KIND as STATIC_SMEM
from reprokit.step_kinds.static_smem import HeadersCompiled, SmemRow, StaticSmemResult, Wheel
from reprokit.workloads.facts.exits import StepStatus
from reprokit.workloads.facts.smem_fit import KernelFit

VERDICT_STYLE = {KernelFit.FITS: "green", KernelFit.EXCEEDS: "bold red", KernelFit.UNSUPPORTED: "yellow"}
SIZE_FIELDS = ("stages", "mainloop_smem_bytes", "epilogue_smem_bytes", "kernel_smem_bytes", "verdict", "verdict_optin")


def typed(result: dict[str, Any] | StaticSmemResult) -> StaticSmemResult:
    """A static-smem ``result.json`` as its model (a one-line ``ResultError`` naming the field when it is not one)."""
    return result if isinstance(result, StaticSmemResult) else STATIC_SMEM.read_result(result, "the static-smem result")


def merged_rows(rows: list[SmemRow]) -> list[SmemRow]:
    """Rows of the same tactic with identical sizes and verdicts, merged; output types joined."""
    merged: dict[tuple, SmemRow] = {}
    for row in rows:
        key = (row.tactic, *(getattr(row, name) for name in SIZE_FIELDS))
        if key in merged:
            merged[key] = merged[key].model_copy(update={"output_dtype": f"{merged[key].output_dtype},{row.output_dtype}"})
        else:
            merged[key] = row
    return sorted(merged.values(), key=lambda r: (r.tactic, r.output_dtype))


def _bytes(value: Any) -> str:
    return "" if value is None else f"{value:,}".replace(",", " ")


def _verdict(row: SmemRow, verdict: str | None, limit: int | None) -> Text:
    if verdict is None:
        return Text("")
    if verdict == KernelFit.UNSUPPORTED or row.kernel_smem_bytes is None or limit is None:
        return Text(verdict, style=VERDICT_STYLE.get(verdict, ""))
    delta = row.kernel_smem_bytes - limit
    return Text(f"{verdict} ({delta:+d})", style=VERDICT_STYLE[verdict])


def smem_table(result: StaticSmemResult) -> Table:
    capacity, optin = result.capacity_bytes, result.optin_limit_bytes
    title = (f"FlashInfer {result.flashinfer} CUTLASS MoE ({given(result.dtype, '')}) on {result.arch}: "
             f"shared memory per kernel vs {given(result.capacity_symbol, 'capacity')} = {capacity} B")
    table = Table(title=title, title_justify="left")
    for name, justify in (("op", "left"), ("tactic", "right"), ("tile MxNxK", "left"), ("enum", "left"),
                          ("fusion", "left"), ("swap_ab", "left"), ("out", "left"), ("stages", "right"),
                          ("mainloop B", "right"), ("epilogue B", "right"), ("SharedStorage B", "right"),
                          ("vs capacity", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    if optin is not None:
        table.add_column(f"vs opt-in {optin}", justify="left")
    for row in merged_rows(result.rows or []):
        cells: list[Any] = [
            str(row.op).rsplit("::", 1)[-1], str(row.tactic), row.tile, row.tile_enum, row.fusion,
            "yes" if row.swap_ab else "no", row.output_dtype, _bytes(row.stages),
            _bytes(row.mainloop_smem_bytes), _bytes(row.epilogue_smem_bytes),
            _bytes(row.kernel_smem_bytes), _verdict(row, row.verdict, capacity),
        ]
        if optin is not None:
            cells.append(_verdict(row, row.verdict_optin, optin))
        table.add_row(*cells)
    return table


def smem_summary(result: dict[str, Any] | StaticSmemResult) -> Group:
    result = typed(result)
    lines: list[Text] = []
    explanation = no_kernels_explanation(result)
    if explanation:  # e.g. sm90: no NVFP4 CUTLASS MoE kernels at all, which "fitting tiles: none" would hide
        return Group(Text(explanation, style="yellow"))
    failing = result.failing_tiles or []
    lines.append(Text.assemble(("failing tiles: ", "bold"), (", ".join(failing) or "none", "bold red" if failing else "green"),
                               ("   fitting tiles: ", "bold"), ", ".join(result.fitting_tiles or []) or "none"))
    if result.unsupported_tiles:
        lines.append(Text(f"not dispatchable (the autotuner skips them): {', '.join(result.unsupported_tiles)}",
                          style="yellow"))
    for op, tactics in (result.failing_tactics or {}).items():
        if tactics:
            lines.append(Text(f"failing tactics of {op}: {', '.join(map(str, tactics))}"))
    seen = set()
    for row in result.rows or []:
        if row.verdict == KernelFit.EXCEEDS and row.tactic not in seen:
            seen.add(row.tactic)
            lines.append(Text(f"tactic {row.tactic} ({row.tile} {row.fusion}"
                              f"{' swap_ab' if row.swap_ab else ''}): {row.explanation}"))
    for note in result.notes or []:
        lines.append(Text(f"note: {note}", style="yellow"))
    sources = result.sources
    if sources is not None and (sources.model_fields_set or sources.model_extra):
        wheel = sources.wheel or Wheel()
        headers = sources.headers_compiled or HeadersCompiled()
        lines.append(Text(
            f"compiled against {wheel.file} (sha256 {(wheel.sha256 or '')[:16]}), "
            + (f"flashinfer commit {str(sources.flashinfer_git_commit)[:12]}, " if sources.flashinfer_git_commit
               else "flashinfer commit not recorded in the wheel, ")
            + f"CUTLASS {given(sources.cutlass.version if sources.cutlass else None, 'version unknown')} "
            f"({given(headers.count, 0)} headers, sha256 {str(given(headers.sha256, ''))[:16]}), "
            f"nvcc {', '.join(sources.nvcc_versions or []) or '?'}", style="dim"))
    return Group(*lines)


def print_smem_result(result: dict[str, Any] | StaticSmemResult, console: Console) -> None:
    result = typed(result)
    if result.status != StepStatus.OK:
        console.print(Text(f"static-smem {result.status}: {result.error or ''}", style="bold red"))
        return
    if result.rows:
        console.print(smem_table(result))
    console.print(smem_summary(result))


def comparison_table(results: list[dict[str, Any]] | list[StaticSmemResult]) -> Table:
    """One line per tile, one column per arch: the largest SharedStorage of the tile's kernels there."""
    typed_results = [typed(r) for r in results]
    version = ", ".join(sorted({str(r.flashinfer) for r in typed_results}))
    table = Table(title=f"FlashInfer {version} CUTLASS MoE: largest SharedStorage per tile, by arch", title_justify="left")
    table.add_column("tile MxNxK")
    for result in typed_results:
        table.add_column(f"{result.arch} (capacity {result.capacity_bytes} B)")
    largest: dict[str, dict[str | None, SmemRow]] = {}
    for result in typed_results:
        for row in result.rows or []:
            if row.kernel_smem_bytes is None:
                continue
            best = largest.setdefault(str(row.tile), {}).get(result.arch)
            if best is None or row.kernel_smem_bytes > best.kernel_smem_bytes:
                largest[str(row.tile)][result.arch] = row
    for tile in sorted(largest, key=lambda t: tuple(int(p) for p in t.split("x"))):
        cells: list[Any] = [tile]
        for result in typed_results:
            row = largest[tile].get(result.arch)
            if row is None:
                cells.append(Text("no such kernel" if result.rows else "no NVFP4 kernels", style="dim"))
            else:
                cells.append(Text(f"{_bytes(row.kernel_smem_bytes)}  {row.verdict} "
                                  f"(tactic {row.tactic}, {row.fusion}{', swap_ab' if row.swap_ab else ''})",
                                  style=VERDICT_STYLE[str(row.verdict)]))
        table.add_row(*cells)
    return table
