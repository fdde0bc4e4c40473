"""The static-smem workload: parameters in, result.json out (see ``__init__``)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reprokit.workloads.contract import Exit, WorkloadError, progress, write_json_atomic
from reprokit.workloads.facts.smem_fit import compile_targets, static_smem_limit_bytes
from reprokit.workloads.facts.tiles import parse_tile
from reprokit.workloads.static_smem import analysis, codegen, sources, targets
from reprokit.workloads.static_smem import wheel as wheels
from reprokit.workloads.static_smem.codegen import KernelVariant
from reprokit.workloads.static_smem.nvcc import Compile, CompileError, Compiler, Nvcc, dependencies, find_nvcc
from reprokit.workloads.static_smem.options import Options
from reprokit.workloads.static_smem.sources import SourceError
from reprokit.workloads.static_smem.targets import GEMM_OPS, OUTPUT_DTYPES, ArchTarget, MoeDtype

MIN_KERNELS_PER_PROGRAM = 8  # below this, a second compile costs more (one more parse) than it saves


def probe_version() -> str:
    """Changes whenever the probe programs change, so cached results from older probes are not reused."""
    digest = hashlib.sha256()
    for module in (codegen, targets):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


class ResultCache:
    """Probe results by (wheel sha256, arch, dtype, variant), valid for one probe version."""

    def __init__(self, root: Path, wheel_sha256: str, arch: ArchTarget, dtype: MoeDtype):
        self.dir = root / "static_smem" / "results" / wheel_sha256[:16] / arch.name / dtype.name
        self.version = probe_version()
        self.hits = 0
        self.misses = 0

    def _path(self, name: str) -> Path:
        return self.dir / f"{name}.json"

    def exists(self, name: str) -> bool:
        """Whether ``get`` would find it (not counted as a hit or a miss)."""
        try:
            return json.loads(self._path(name).read_text()).get("probe_version") == self.version
        except (OSError, ValueError):
            return False

    def get(self, name: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self._path(name).read_text())
        except (OSError, ValueError):
            entry = None
        if entry is None or entry.get("probe_version") != self.version:
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def put(self, name: str, entry: dict[str, Any]) -> None:
        write_json_atomic(self._path(name), {"probe_version": self.version, **entry})


class Analysis:
    """One run: the wheel's facts, the compiler, the caches and the probe directory."""

    def __init__(self, options: Options, out_dir: Path, speculative_kernels: bool = True):
        self.options = options
        self.speculative_kernels = speculative_kernels
        self.out_dir = out_dir
        self.probe_dir = out_dir / "probe"
        self.log_dir = out_dir / "logs"
        self.wheel = wheels.fetch(options.flashinfer, options.cache_dir, options.wheel)
        self.package = self.wheel.package
        self.cache = ResultCache(options.cache_dir, self.wheel.sha256, options.arch, options.dtype)
        self._nvcc: Nvcc | None = None
        self._compiler: Compiler | None = None
        self.headers: dict[str, str] = {}
        self.nvcc_versions: set[str] = set()
        self._speculative: list[tuple[Compile, list[KernelVariant]]] = []
        self._flags: list[str] | None = None

    # -- tools, created only when something must be compiled ---------------------------------
    @property
    def nvcc(self) -> Nvcc:
        if self._nvcc is None:
            self._nvcc = find_nvcc(self.options.nvcc)
        return self._nvcc

    @property
    def compiler(self) -> Compiler:
        if self._compiler is None:
            object_cache = self.options.cache_dir / "static_smem" / "obj"
            self._compiler = Compiler(self.nvcc, object_cache, self.options.jobs,
                                      path_roots={"<wheel>": self.wheel.root, "<probe>": self.probe_dir})
            self._prepare_probe_dir()
        return self._compiler

    def _prepare_probe_dir(self) -> None:
        """The generated headers every probe includes, and the log directory."""
        if not (self.probe_dir / "reprokit_probe_common.h").is_file():
            launcher = sources.read(self.package, sources.LAUNCHER)
            sources.check_instantiation_macro(launcher)
            self.log_dir.mkdir(parents=True, exist_ok=True)
            codegen.write_support_files(self.probe_dir, launcher)

    def flags(self) -> list[str]:
        if self._flags is not None:
            return self._flags
        release = self.nvcc.release
        launchers = self.package / sources.KERNELS / "moe_gemm" / "launchers"
        includes = [self.probe_dir, launchers, *sources.include_dirs(self.package)]
        self._flags = [*sources.jit_common_flags(self.package, release),
                *sources.arch_module_flags(self.package, self.options.arch.jit_module, release),
                self.options.arch.gencode,
                *(f"-I{d}" for d in includes),
                f"-Xcompiler=-idirafter,{self.probe_dir / 'shim'}"]
        # Optimisation changes no type and no sizeof; -O0 halves the host compiler's share of the time.
        self._flags = [("-O0" if f.startswith("-O") else f) for f in self._flags]
        return self._flags

    def _compile(self, name: str, source: Path, language_cu: bool = False) -> Compile:
        support = "".join((self.probe_dir / f).read_text() for f in
                          ("reprokit_probe_common.h", "reprokit_probe_kernel.h", "moe_gemm_tma_ws_launcher_sizes.inl"))
        args = [*self.flags(), *(["-x", "cu"] if language_cu else []), "-c", str(source)]
        return Compile(name, args, self.probe_dir / f"{name}.o", self.log_dir / f"{name}.log",
                       inputs_text=source.read_text(errors="replace") + support)

    def _common_objects(self) -> list[Compile]:
        common = self.package / "data" / "csrc" / "nv_internal" / "cpp" / "common"
        return [self._compile(Path(name).stem, common / name, language_cu=True) for name in sources.COMMON_SOURCES]

    def _record_headers(self, jobs: list[Compile]) -> dict[str, str]:
        found = {}
        root = self.wheel.root.resolve()
        for job in jobs:
            for dep in dependencies(job.depfile):
                path = (job.output.parent / dep).resolve()
                if path.is_relative_to(root) and path.is_file():
                    found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
                elif path.name in ("cublas_v2.h", "cublasLt.h") and path.parent.name == "shim":
                    found["(reprokit shim) " + path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        return found

    # -- the two probes --------------------------------------------------------------------------
    def tactics(self) -> list[dict[str, Any]]:
        cached = self.cache.get("tactics")
        if cached is not None:
            self.headers.update(cached["headers"])
            self.nvcc_versions.add(cached["nvcc"])
            return cached["records"]
        arch, dtype = self.options.arch, self.options.dtype
        progress(f"static-smem: building the tactics probe (FlashInfer's getTactics + dispatcher) for {arch.name}")
        compiler = self.compiler
        program = self.probe_dir / "tactics.cu"
        program.write_text(codegen.tactics_program(sources.read(self.package, sources.LAUNCHER_DECL), arch, dtype,
                                                   {o: OUTPUT_DTYPES[o] for o in dtype.output_dtypes}))
        heuristic = self.package / sources.HEURISTIC
        jobs = [self._compile("tactics", program), self._compile("cutlass_heuristic", heuristic, language_cu=True),
                *self._common_objects()]
        speculative = self._speculative_kernel_programs()
        compiler.run_all([job for job, _ in speculative] + jobs)  # the longest compile first
        self._speculative = speculative
        lines = compiler.link_and_run("tactics", [j.output for j in jobs], arch.gencode, self.probe_dir,
                                      self.log_dir / "tactics.log")
        records = [json.loads(line) for line in lines if line.startswith("{")]
        headers = self._record_headers(jobs)
        self.headers.update(headers)
        self.cache.put("tactics", {"records": records, "headers": headers, "nvcc": self.nvcc.version})
        return records

    def _speculative_kernel_programs(self) -> list[tuple[Compile, list[KernelVariant]]]:
        """On SM120 the kernels to measure follow from the parsed sources; compiling them while the
        tactics probe compiles keeps both cores busy. The tactics probe still decides what is used."""
        if self.options.arch.sm < 120 or not self.speculative_kernels:
            return []
        heuristic = sources.read(self.package, sources.HEURISTIC)
        dispatchable = {t.value for t in sources.dispatch_shape_cases(sources.read(self.package, sources.DISPATCH_TMA_WS), 120)}
        variants = []
        for tile in sources.sm120_grouped_candidates(heuristic):
            if tile.value not in dispatchable:
                continue
            cta = (tile.m, tile.n, tile.k_elements(self.options.dtype.act_bits))
            if self.options.variants and not any(v == "x".join(map(str, cta)) for v in self.options.variants):
                continue
            for output, output_cpp in self.options.outputs.items():
                for fusion in ("NONE", "FINALIZE"):
                    for swap in (False, True):
                        variants.append(KernelVariant("Sm120", self.options.dtype.act_token, self.options.dtype.weight_token,
                                                      output, output_cpp, "void", fusion, cta, (1, 1, 1),
                                                      self.options.dtype.is_mx_fpx, False, swap))
        missing = [v for v in variants if not self.cache.exists(f"kernel-{v.key}")]
        # one worker compiles the kernels while the others compile the tactics probe and its helpers
        return self._kernel_programs(missing, max(1, self.options.jobs - 1))

    def _kernel_programs(self, variants: list[KernelVariant], programs: int,
                         stem: str = "kernels") -> list[tuple[Compile, list[KernelVariant]]]:
        """``variants`` split into ``programs`` compiles named ``stem``: parsing CUTLASS costs ~35 s per compile,
        each kernel instantiated in it ~1.5 s more, so few large compiles win on few cores."""
        self._prepare_probe_dir()
        variants = sorted(variants, key=lambda v: v.key)
        count = max(1, min(programs, -(-len(variants) // MIN_KERNELS_PER_PROGRAM)))
        size = -(-len(variants) // count) if variants else 0
        out = []
        for index in range(count):
            chunk = variants[index * size:(index + 1) * size]
            if not chunk:
                continue
            name = f"{stem}-{index + 1}of{count}" if count > 1 else stem
            path = self.probe_dir / f"{name}.cu"
            path.write_text(codegen.kernel_program(chunk, self.options.arch, self.options.dtype))
            out.append((self._compile(name, path), chunk))
        return out

    def kernels(self, variants: list[KernelVariant]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        missing = []
        for variant in variants:
            cached = self.cache.get(f"kernel-{variant.key}")
            if cached is None:
                missing.append(variant)
            else:
                found[variant.key] = cached["record"]
                self.headers.update(cached["headers"])
                self.nvcc_versions.add(cached["nvcc"])
        if not missing:
            return found
        speculative = {v.key: (job, chunk) for job, chunk in self._speculative for v in chunk}
        programs = list({id(job): (job, chunk) for job, chunk in
                         (speculative[v.key] for v in missing if v.key in speculative)}.values())
        rest = [v for v in missing if v.key not in speculative]
        if rest:
            progress(f"static-smem: compiling {len(rest)} kernel variant(s) with {self.options.jobs} nvcc job(s)")
            # named apart from the speculative programs when there are some: under one name the second compile's
            # object and binary would replace the first's, and the first's kernels would be read from the second's output
            stem = "kernels-more" if self._speculative else "kernels"
            new_programs = self._kernel_programs(rest, self.options.jobs, stem=stem)
            self.compiler.run_all([job for job, _ in new_programs])
            programs += new_programs
        commons = self._common_objects()
        self.compiler.run_all(commons)
        for job, chunk in programs:
            lines = self.compiler.link_and_run(job.name, [job.output, *(c.output for c in commons)],
                                               self.options.arch.gencode, self.probe_dir, self.log_dir / f"{job.name}.log")
            records = [json.loads(line) for line in lines if line.startswith("{")]
            if len(records) != len(chunk):
                raise WorkloadError(Exit.CHECK_FAILED, f"probe program {job.name} printed {len(records)} records for "
                                                       f"{len(chunk)} kernels; see {self.log_dir / (job.name + '.log')}")
            headers = self._record_headers([job, *commons])
            self.headers.update(headers)
            for variant, record in zip(chunk, records):
                expected = ("x".join(map(str, variant.cta)), variant.fusion, variant.swap_ab)
                if (record["cta"], record["fusion"], record["swap_ab"]) != expected:
                    raise WorkloadError(Exit.CHECK_FAILED, f"probe program {job.name}: record {record['cta']} "
                                                           f"{record['fusion']} does not match kernel {variant.key}")
                self.cache.put(f"kernel-{variant.key}", {"record": record, "headers": headers, "nvcc": self.nvcc.version})
                found[variant.key] = record
        return found


def variant_of(entry: dict[str, Any], output: str, options: Options) -> KernelVariant:
    """The launcher instantiation a dispatched tactic lands on, for one output type."""
    schedule = entry["epilogue_schedule"] or "void"
    cluster = tuple(int(v) for v in entry["dispatched_cluster"].split("x"))
    return KernelVariant(
        arch_tag="Sm120" if options.arch.sm >= 120 else f"Sm{options.arch.sm}",
        act_token=options.dtype.act_token, weight_token=options.dtype.weight_token,
        output=output, output_cpp=options.outputs[output],
        epilogue_schedule=schedule.rsplit("::", 1)[-1],
        fusion=entry["fusion"], cta=parse_tile(entry["dispatched_tile"]), cluster=cluster,  # type: ignore[arg-type]
        is_mx_fpx=options.dtype.is_mx_fpx, dynamic_cga=bool(entry["dynamic_cga"]), swap_ab=entry["swap_ab"])


@contextmanager
def reported_as_workload_errors(options: Options) -> Iterator[None]:
    """Turn the analysis' own failures into one-line WorkloadErrors (exit 5), logs kept."""
    try:
        yield
    except SourceError as exc:
        raise WorkloadError(Exit.CHECK_FAILED, f"flashinfer {options.flashinfer}: {exc}") from None
    except ValueError as exc:  # a tactic whose recorded facts contradict each other (e.g. the K units)
        raise WorkloadError(Exit.CHECK_FAILED, f"flashinfer {options.flashinfer} ({options.arch.name}, "
                                               f"{options.dtype.name}): {exc}") from None
    except CompileError as exc:
        raise WorkloadError(Exit.CHECK_FAILED,
                            f"nvcc failed on {exc.job.name} (flashinfer {options.flashinfer}, {options.arch.name}): "
                            f"{exc.first_error} [full log: {exc.job.log}]",
                            failed_compile=exc.job.name, compile_log=str(exc.job.log)) from None


def run(params: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    started = time.monotonic()
    options = Options.from_params(params)
    with reported_as_workload_errors(options):
        return _run(Analysis(options, out_dir), options, started)


def _run(run_: Analysis, options: Options, started: float) -> dict[str, Any]:
    package, arch = run_.package, options.arch
    progress(f"static-smem: flashinfer-python {options.flashinfer} (sha256 {run_.wheel.sha256[:12]}), "
             f"{arch.name}, {options.dtype.name}")
    records = run_.tactics()
    entries_by_output: dict[str, list[dict[str, Any]]] = {}
    for output in options.outputs:
        output_records = [r for r in records if r["kind"] == "tactic" and r["output"] == output]
        entries_by_output[output] = analysis.tactic_entries(output_records, options.dtype.act_bits, arch.name)
    selected = {o: [e for e in entries if options.selects(e)] for o, entries in entries_by_output.items()}
    variants = {variant_of(e, o, options).key: variant_of(e, o, options)
                for o, entries in selected.items() for e in entries if not e["dispatch_error"]}
    kernels = run_.kernels(list(variants.values()))
    capacity = _capacity(kernels, package, arch)
    rows = analysis.build_rows(selected, kernels, lambda e, o: variant_of(e, o, options).key,
                               capacity, options.optin_limit_bytes)
    verdicts = analysis.tile_verdicts(rows)
    first_output = next(iter(entries_by_output.values()))
    gemm_counts = {op: sum(1 for e in first_output if e["op"] == op) for op in GEMM_OPS.values()}
    indexing = sources.tactic_indexing(sources.read(package, sources.FUSED_MOE_CORE), sources.read(package, sources.binding(package)))
    notes = []
    skipped = analysis.non_tma_tactics([r for r in records if r["kind"] == "tactic" and r["output"] == next(iter(options.outputs))])
    if skipped:
        notes.append(f"{len(skipped)} tactic(s) of flashinfer {options.flashinfer} for {arch.name} {options.dtype.name} are "
                     f"not TMA warp-specialized (SM80-style kernels) and are not analysed: {_ranges(skipped)}")
    if not first_output:
        notes.append(f"flashinfer {options.flashinfer} has no TMA warp-specialized {options.dtype.name} MoE "
                     f"tactics for {arch.name} (its runner returns none)")
    elapsed = time.monotonic() - started
    progress(f"static-smem: {len(rows)} rows, failing tiles {verdicts['failing_tiles'] or 'none'} "
             f"({elapsed:.1f} s, {run_.cache.hits} cached, {run_.cache.misses} computed)")
    return {
        "flashinfer": options.flashinfer,
        "arch": arch.name,
        "dtype": options.dtype.name,
        "output_dtypes": list(options.outputs),
        "capacity_bytes": capacity,
        "capacity_symbol": arch.capacity_symbol,
        "optin_limit_bytes": options.optin_limit_bytes,
        "optin_source": options.optin_source,
        **verdicts,
        "failing_tactics": analysis.failing_tactics(rows),
        "failing_tactics_optin": (analysis.failing_tactics(rows, "verdict_optin")
                                  if options.optin_limit_bytes is not None else None),
        "tactic_counts": gemm_counts,
        "tactic_indexing": {"rule": indexing.rule, "evidence": indexing.evidence},
        "candidates": {
            "get_candidate_configs_sm120": ([t.name for t in sources.sm120_grouped_candidates(sources.read(package, sources.HEURISTIC))]
                                            if arch.sm >= 120 else None),
            "dispatch_shape_cases": [t.name for t in sources.dispatch_shape_cases(
                sources.read(package, sources.DISPATCH_TMA_WS), 120 if arch.sm >= 120 else arch.sm)],
        },
        "rows": rows,
        "sources": _sources(run_),
        "notes": notes,
        "cache": {"hits": run_.cache.hits, "computed": run_.cache.misses, "dir": str(run_.cache.dir)},
        "elapsed_s": round(elapsed, 2),
        "artifacts": {"logs": "logs/", "probe_programs": "probe/"} if run_.log_dir.exists() else {},
    }


def _ranges(numbers: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)


def _capacity(kernels: dict[str, dict[str, Any]], package: Path, arch: ArchTarget) -> int:
    """The arch's capacity constant, as compiled into the probes (or read from arch.h when none ran)."""
    compiled = {k["capacity_bytes"] for k in kernels.values()}
    if len(compiled) > 1:
        raise WorkloadError(Exit.CHECK_FAILED, f"probes disagree on {arch.capacity_symbol}: {sorted(compiled)}")
    if compiled:
        return compiled.pop()
    return sources.capacity_from_headers(package, arch.capacity_symbol)


def _sources(run_: Analysis) -> dict[str, Any]:
    package = run_.package
    meta = sources.build_meta(sources.read(package, sources.BUILD_META))
    cutlass = sources.cutlass_version(sources.read(package, sources.CUTLASS_VERSION_H))
    digest = hashlib.sha256("".join(f"{p}\0{h}\n" for p, h in sorted(run_.headers.items())).encode()).hexdigest()
    result: dict[str, Any] = {
        "wheel": {"file": run_.wheel.path.name, "sha256": run_.wheel.sha256},
        "flashinfer_git_commit": meta["git_commit"],
        "cutlass": {**cutlass, "headers": "flashinfer/data/cutlass/include",
                    "commit": None,
                    "commit_note": "the wheel records no CUTLASS commit (CUTLASS_REVISION is empty); it is the "
                                   f"submodule pinned by flashinfer commit {meta['git_commit']}"},
        "files": [{"path": f"flashinfer/{p}", "sha256": sources.file_sha256(package, p)}
                  for p in sources.KEY_FILES if (package / p).is_file()],
        "headers_compiled": {"count": len(run_.headers), "sha256": digest,
                             "cublas_shim_used": any(p.startswith("(reprokit shim)") for p in run_.headers)},
    }
    result["nvcc_versions"] = sorted(run_.nvcc_versions | ({run_._nvcc.version} if run_._nvcc else set()))
    if run_._nvcc is not None:
        result["nvcc"] = {"path": str(run_._nvcc.path), "version": run_._nvcc.version}
        result["nvcc_flags"] = [f for f in run_.flags() if not f.startswith(("-I", "-Xcompiler=-idirafter"))]
        result["static_smem_limits"] = {t: static_smem_limit_bytes(t) for t in compile_targets(result["nvcc_flags"])}
    return result
