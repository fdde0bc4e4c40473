"""The static shared-memory result (workload ``static-smem``) as a table people can read.

One line per tactic; when a tactic's kernels for several output types have the
same sizes (they do on SM120: bf16 and f16 are both 16-bit), they share a line.
Under the table: the failing tiles, why each failing kernel does not fit, and
what the numbers were compiled from.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from reprokit.step_kinds.static_smem import KIND as STATIC_SMEM
from reprokit.step_kinds.static_smem import no_kernels_explanation

VERDICT_STYLE = {"fits": "green", "exceeds": "bold red", "unsupported": "yellow"}
SIZE_KEYS = ("stages", "mainloop_smem_bytes", "epilogue_smem_bytes", "kernel_smem_bytes", "verdict", "verdict_optin")


def merged_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the same tactic with identical sizes and verdicts, merged; output types joined."""
    merged: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        key = (row["tactic"], *(row.get(k) for k in SIZE_KEYS))
        if key in merged:
            merged[key]["output_dtype"] += "," + row["output_dtype"]
        else:
            merged[key] = dict(row)
    return sorted(merged.values(), key=lambda r: (r["tactic"], r["output_dtype"]))


def _bytes(value: Any) -> str:
    return "" if value is None else f"{value:,}".replace(",", " ")


def _verdict(row: dict[str, Any], key: str, limit: int | None) -> Text:
    verdict = row.get(key)
    if verdict is None:
        return Text("")
    if verdict == "unsupported" or row.get("kernel_smem_bytes") is None or limit is None:
        return Text(verdict, style=VERDICT_STYLE.get(verdict, ""))
    delta = row["kernel_smem_bytes"] - limit
    return Text(f"{verdict} ({delta:+d})", style=VERDICT_STYLE[verdict])


def smem_table(result: dict[str, Any]) -> Table:
    capacity = result.get("capacity_bytes")
    optin = result.get("optin_limit_bytes")
    title = (f"FlashInfer {result['flashinfer']} CUTLASS MoE ({result.get('dtype', '')}) on {result['arch']}: "
             f"shared memory per kernel vs {result.get('capacity_symbol', 'capacity')} = {capacity} B")
    table = Table(title=title, title_justify="left")
    for name, justify in (("op", "left"), ("tactic", "right"), ("tile MxNxK", "left"), ("enum", "left"),
                          ("fusion", "left"), ("swap_ab", "left"), ("out", "left"), ("stages", "right"),
                          ("mainloop B", "right"), ("epilogue B", "right"), ("SharedStorage B", "right"),
                          ("vs capacity", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    if optin is not None:
        table.add_column(f"vs opt-in {optin}", justify="left")
    for row in merged_rows(result.get("rows", [])):
        cells: list[Any] = [
            row["op"].rsplit("::", 1)[-1], str(row["tactic"]), row["tile"], row["tile_enum"], row["fusion"],
            "yes" if row["swap_ab"] else "no", row["output_dtype"], _bytes(row.get("stages")),
            _bytes(row.get("mainloop_smem_bytes")), _bytes(row.get("epilogue_smem_bytes")),
            _bytes(row.get("kernel_smem_bytes")), _verdict(row, "verdict", capacity),
        ]
        if optin is not None:
            cells.append(_verdict(row, "verdict_optin", optin))
        table.add_row(*cells)
    return table


def smem_summary(result: dict[str, Any]) -> Group:
    lines: list[Text] = []
    explanation = no_kernels_explanation(STATIC_SMEM.read_result(result, "the static-smem result"))
    if explanation:  # e.g. sm90: no NVFP4 CUTLASS MoE kernels at all, which "fitting tiles: none" would hide
        return Group(Text(explanation, style="yellow"))
    failing = result.get("failing_tiles", [])
    lines.append(Text.assemble(("failing tiles: ", "bold"), (", ".join(failing) or "none", "bold red" if failing else "green"),
                               ("   fitting tiles: ", "bold"), ", ".join(result.get("fitting_tiles", [])) or "none"))
    if result.get("unsupported_tiles"):
        lines.append(Text(f"not dispatchable (the autotuner skips them): {', '.join(result['unsupported_tiles'])}",
                          style="yellow"))
    for op, tactics in (result.get("failing_tactics") or {}).items():
        if tactics:
            lines.append(Text(f"failing tactics of {op}: {', '.join(map(str, tactics))}"))
    seen = set()
    for row in result.get("rows", []):
        if row.get("verdict") == "exceeds" and row["tactic"] not in seen:
            seen.add(row["tactic"])
            lines.append(Text(f"tactic {row['tactic']} ({row['tile']} {row['fusion']}"
                              f"{' swap_ab' if row['swap_ab'] else ''}): {row['explanation']}"))
    for note in result.get("notes", []):
        lines.append(Text(f"note: {note}", style="yellow"))
    sources = result.get("sources", {})
    if sources:
        cutlass = sources.get("cutlass", {})
        headers = sources.get("headers_compiled", {})
        lines.append(Text(
            f"compiled against {sources.get('wheel', {}).get('file')} (sha256 {sources.get('wheel', {}).get('sha256', '')[:16]}), "
            f"flashinfer commit {str(sources.get('flashinfer_git_commit'))[:12]}, CUTLASS {cutlass.get('version')} "
            f"({headers.get('count', 0)} headers, sha256 {str(headers.get('sha256', ''))[:16]}), "
            f"nvcc {', '.join(sources.get('nvcc_versions', [])) or '?'}", style="dim"))
    return Group(*lines)


def print_smem_result(result: dict[str, Any], console: Console) -> None:
    if result.get("status") not in (None, "ok"):
        console.print(Text(f"static-smem {result.get('status')}: {result.get('error', '')}", style="bold red"))
        return
    if result.get("rows"):
        console.print(smem_table(result))
    console.print(smem_summary(result))


def comparison_table(results: list[dict[str, Any]]) -> Table:
    """One line per tile, one column per arch: the largest SharedStorage of the tile's kernels there."""
    version = ", ".join(sorted({r["flashinfer"] for r in results}))
    table = Table(title=f"FlashInfer {version} CUTLASS MoE: largest SharedStorage per tile, by arch", title_justify="left")
    table.add_column("tile MxNxK")
    for result in results:
        table.add_column(f"{result['arch']} (capacity {result.get('capacity_bytes')} B)")
    largest: dict[str, dict[str, dict[str, Any]]] = {}
    for result in results:
        for row in result.get("rows", []):
            if row.get("kernel_smem_bytes") is None:
                continue
            best = largest.setdefault(row["tile"], {}).get(result["arch"])
            if best is None or row["kernel_smem_bytes"] > best["kernel_smem_bytes"]:
                largest[row["tile"]][result["arch"]] = row
    for tile in sorted(largest, key=lambda t: tuple(int(p) for p in t.split("x"))):
        cells: list[Any] = [tile]
        for result in results:
            row = largest[tile].get(result["arch"])
            if row is None:
                cells.append(Text("no such kernel" if result.get("rows") else "no NVFP4 kernels", style="dim"))
            else:
                cells.append(Text(f"{_bytes(row['kernel_smem_bytes'])}  {row['verdict']} "
                                  f"(tactic {row['tactic']}, {row['fusion']}{', swap_ab' if row['swap_ab'] else ''})",
                                  style=VERDICT_STYLE[row["verdict"]]))
        table.add_row(*cells)
    return table
