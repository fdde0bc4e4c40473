"""Generate ``reprokit/data/tactics/flashinfer-<version>.json``: autotuner tactic int -> tile.

FlashInfer's autotuner logs tactics of ``trtllm::fused_moe::gemm1`` / ``gemm2`` as
plain ints ("Skipping tactic <runner> 15, due to failure while profiling"). This
file maps each int back to its tile (in elements), tile enum (K in bytes),
epilogue fusion and swap_ab, as the wheel's own runner and dispatcher define
them (see ``codegen.tactics_program``). Usage::

    python -m reprokit.workloads.static_smem.tactics --flashinfer 0.6.3 [--arch sm120] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import WorkloadError, write_json_atomic
from reprokit.workloads.static_smem import analysis, sources
from reprokit.workloads.static_smem.options import Options
from reprokit.workloads.static_smem.workload import Analysis, reported_as_workload_errors

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "tactics"
ENTRY_KEYS = ("op", "tactic", "tile", "tile_enum", "fusion", "swap_ab", "index_in_op", "tile_enum_value",
              "dispatch_error")


def tactics_document(params: dict[str, Any], work_dir: Path) -> dict[str, Any]:
    """The data file's content for ``params`` (``flashinfer``, ``arch``, ``cache_dir``, ...)."""
    options = Options.from_params({"output_dtypes": ["bf16"], **params})
    with reported_as_workload_errors(options):
        run = Analysis(options, work_dir, speculative_kernels=False)
        records = [r for r in run.tactics() if r["kind"] == "tactic" and r["output"] == "bf16"]
        entries = analysis.tactic_entries(records, options.dtype.act_bits, options.arch.name)
        package = run.package
        indexing = sources.tactic_indexing(sources.read(package, sources.FUSED_MOE_CORE), sources.read(package, sources.binding(package)))
        meta = sources.build_meta(sources.read(package, sources.BUILD_META))
    return {
        "flashinfer": options.flashinfer,
        "arch": options.arch.name,
        "tactics": [{k: e[k] for k in ENTRY_KEYS} for e in entries],
        "source": {
            "wheel_sha256": run.wheel.sha256,
            "flashinfer_git_commit": meta["git_commit"],
            "runner": f"CutlassMoeFCRunner<{options.dtype.act_cpp}, {options.dtype.weight_cpp}, __nv_bfloat16, "
                      f"__nv_bfloat16>::getTactics({options.arch.sm}, GEMM_1 / GEMM_2)",
            "dispatcher": "dispatchMoeGemmSelectTileShapeTmaWarpSpecialized (tile = the TileShape it instantiates)",
            "dtype": options.dtype.name,
            "indexing": indexing.rule,
            "evidence": indexing.evidence,
            "counts": {op: sum(1 for e in entries if e["op"] == op) for op in analysis.GEMM_OPS.values()},
            "files": {f"flashinfer/{p}": sources.file_sha256(package, p)
                      for p in (sources.HEURISTIC, sources.DISPATCH_TMA_WS, sources.DISPATCH, sources.MOE_KERNELS_H,
                                sources.binding(package), sources.FUSED_MOE_CORE)},
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reprokit.workloads.static_smem.tactics", description=__doc__.split("\n\n")[0])
    parser.add_argument("--flashinfer", required=True, help="flashinfer-python version, e.g. 0.6.3")
    parser.add_argument("--arch", default="sm120", help="sm120 (default), sm121, sm100, sm90")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help=f"directory of the data files (default {DATA_DIR})")
    parser.add_argument("--cache-dir", help="reprokit cache (default $REPROKIT_CACHE, else $XDG_CACHE_HOME/reprokit or ~/.cache/reprokit)")
    args = parser.parse_args(argv)
    params: dict[str, Any] = {"flashinfer": args.flashinfer, "arch": args.arch}
    if args.cache_dir:
        params["cache_dir"] = args.cache_dir
    with tempfile.TemporaryDirectory(prefix="reprokit-tactics-") as tmp:
        try:
            document = tactics_document(params, Path(tmp))
        except WorkloadError as exc:
            print(f"tactics: {exc}", file=sys.stderr)
            return int(exc.code)
    name = f"flashinfer-{args.flashinfer}.json" if args.arch == "sm120" else f"flashinfer-{args.flashinfer}-{args.arch}.json"
    target = args.out / name
    write_json_atomic(target, document)
    target.chmod(0o644)  # a data file of the repository, not a private temporary
    print(f"tactics: wrote {target} ({len(document['tactics'])} tactics)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
