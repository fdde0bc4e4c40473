"""Which versions of the stack a log reveals: FlashInfer, sglang, vLLM, TensorRT-LLM, CUDA, and the GPU arch.

A tactic number means a different tile in each FlashInfer release, so the triage reads the
version from the log itself when nobody passes it: sglang's autotune cache path, FlashInfer's
JIT cache path, start-up banners, pip listings. Every clue is one table entry with a real
example line. The first version a log names for a component is used; every distinct one is kept,
so that a log naming two FlashInfer versions is reported instead of mapped with either table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_VERSION = r"(\d+\.\d+(?:\.\d+)?(?:(?:\.?post|\.?dev|rc|a|b)\d*)*(?:\+[0-9A-Za-z.]+)?)"


@dataclass(frozen=True)
class VersionClue:
    """A string that names a component's version (group 1) and maybe the GPU arch (group ``arch``)."""

    component: str  # flashinfer, sglang, vllm, tensorrt_llm, cuda
    regex: str
    example: str  # a real line, from the source named
    source: str
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.regex))


CLUES: tuple[VersionClue, ...] = (
    VersionClue(
        "flashinfer", r"/flashinfer/autotune/" + _VERSION + r"/sm(?P<arch>\d+[af]?)/",
        "[2026-06-29 01:38:08 TP3] Running FlashInfer autotune with cache: "
        "/root/.cache/sglang/flashinfer/autotune/0.6.12/sm103/15fc7a2edb371f48/rank_tp3_pp0_dp0.json",
        "sglang model_runner._flashinfer_autotune cache path (sglang #29595)",
    ),
    VersionClue(
        "flashinfer", r"/\.cache/flashinfer/" + _VERSION + r"/(?P<arch>\d+)[af]?/",
        "(Worker_PP0 pid=38385) 2       0x7c6dd11ca0ad /home/weiliangl/.cache/flashinfer/0.5.2/120a/cached_ops/"
        "fused_moe_120/fused_moe_120.so(+0x9080ad) [0x7c6dd11ca0ad]",
        "FlashInfer's JIT cache ~/.cache/flashinfer/<version>/<arch>/ in a backtrace (flashinfer #2077)",
    ),
    VersionClue(
        "flashinfer", r"flashinfer_version: saved=[^ ]+ vs current=" + _VERSION,
        "2026-02-19 10:05:12,117 - WARNING - autotuner.py:1412 - flashinfer.jit: [Autotuner]: Cache file "
        "/root/.cache/sglang/flashinfer/autotune/rank_tp0_pp0_dp0.json was created in a different environment "
        "(flashinfer_version: saved=0.6.2 vs current=0.6.3). Ignoring cached configs.",
        "flashinfer/autotuner.py load_configs (the running version is 'current')",
    ),
    VersionClue(
        "flashinfer", r"flashinfer[-_]python(?:==| +|-)" + _VERSION,
        "- `flashinfer-python==0.6.15.dev20260718`, `flashinfer-cubin==0.6.15.dev20260718`",
        "pip pins and `pip list` rows as pasted with a log (flashinfer #4049)",
    ),
    VersionClue(
        "vllm", r"vLLM API server version " + _VERSION,
        "INFO 09-03 16:28:10 [api_server.py:1882] vLLM API server version 0.10.2.dev378+g4d7fe40fc.d20250829",
        "vllm/entrypoints/openai/api_server.py (vllm #24162)",
    ),
    VersionClue(
        "vllm", r"█ +version " + _VERSION + r" *$",
        "(APIServer pid=536) INFO 06-20 19:17:46 [api_utils.py:339]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version "
        "0.23.1rc1.dev197+g01192139b.d20260619",
        "vLLM's start-up banner (eugr/spark-vllm-docker #296)",
    ),
    VersionClue(
        "vllm", r"Initializing a V1 LLM engine \(v" + _VERSION + r"\)",
        "INFO 09-03 16:28:23 [core.py:75] Initializing a V1 LLM engine (v0.10.2.dev378+g4d7fe40fc.d20250829) with "
        "config: model='/data/datasets/models-hf/Qwen2.5-0.5B/'",
        "vllm/v1/engine/core.py (vllm #24162)",
    ),
    VersionClue(
        "tensorrt_llm", r"\[TensorRT-LLM\] TensorRT-LLM version: " + _VERSION,
        "[TensorRT-LLM] TensorRT-LLM version: 0.17.0.post1",
        "tensorrt_llm/__init__.py start-up print (TensorRT-LLM #2845)",
    ),
    VersionClue(
        "sglang", r"\bsglang(?:\[[a-z,]+\])?==" + _VERSION,
        "pip install sglang[all]==0.5.9",
        "pip pins pasted with a log",
    ),
    VersionClue(
        "cuda", r"CUDA Version: " + _VERSION,
        "| NVIDIA-SMI 550.144.03             Driver Version: 550.144.03     CUDA Version: 12.4     |",
        "nvidia-smi's header (the driver's CUDA version; sglang #3196)",
    ),
)

# cheap substrings: a line without any of them names no version (most lines)
_HINTS = re.compile(r"version|Version|engine \(v|/flashinfer/|flashinfer_python|flashinfer-python|==")
MAX_DISTINCT_PER_COMPONENT = 8


@dataclass
class VersionsSeen:
    """The versions and arch a log names, first seen first."""

    by_component: dict[str, list[str]] = field(default_factory=dict)
    archs: list[str] = field(default_factory=list)

    def scan(self, text: str) -> None:
        if _HINTS.search(text) is None:
            return
        for clue in CLUES:
            match = clue.compiled.search(text)
            if match is None:
                continue
            self._add(self.by_component.setdefault(clue.component, []), match.group(1))
            if "arch" in clue.compiled.groupindex and match.group("arch"):
                self._add(self.archs, "sm" + match.group("arch").rstrip("af"))

    def add_arch(self, arch: str) -> None:
        self._add(self.archs, arch)

    def merge(self, other: VersionsSeen) -> None:
        for component, versions in other.by_component.items():
            for version in versions:
                self._add(self.by_component.setdefault(component, []), version)
        for arch in other.archs:
            self._add(self.archs, arch)

    def first(self) -> dict[str, str]:
        return {component: versions[0] for component, versions in sorted(self.by_component.items())}

    @staticmethod
    def _add(values: list[str], value: str) -> None:
        if value not in values and len(values) < MAX_DISTINCT_PER_COMPONENT:
            values.append(value)
