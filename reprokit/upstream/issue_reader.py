"""What a saved upstream issue says a kit needs: the arch, the kernel, the byte figures, the versions, the thread.

The readers are tables of patterns, as the triage's are, and reuse its ones where a log line and an issue
share a form: the version clues (``reprokit.triage.versions.CLUES``: JIT cache paths, banners, pip pins) and the
error texts of ``reprokit.workloads.facts.upstream_errors`` (Triton's ``OutOfResources ... Required: N, Hardware limit:
M``). Prose adds the forms people write: ``| vLLM | 0.17.0 |`` table rows, ``triton 3.5.0``, ``118,784 B``,
``SM120``/``sm_120a``/``GB10``. The step kind is a guess from what the thread shows (a Triton error, a CuTe-DSL
kernel, a CUTLASS tile list, a server log), for the author to confirm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reprokit.triage.versions import CLUES
from reprokit.workloads.facts.arch import DEFAULT_SMEM_PER_BLOCK_BYTES, SMEM_OPTIN_BYTES_BY_ARCH
from reprokit.workloads.facts.upstream_errors import TRITON_OUT_OF_RESOURCES

PACKAGES = {"flashinfer": "flashinfer-python", "flashinfer-python": "flashinfer-python", "vllm": "vllm",
            "sglang": "sglang", "triton": "triton", "triton_kernels": "triton-kernels", "torch": "torch",
            "pytorch": "torch", "tensorrt-llm": "tensorrt-llm", "cutlass": "nvidia-cutlass-dsl"}
VERSION = r"v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+)?)(?![.]?[x*\d])"  # not "0.6.x"
PROSE_VERSIONS = (
    re.compile(r"\|\s*(?P<name>[A-Za-z_][\w-]*)\s*\|\s*" + VERSION + r"\b"),  # | vLLM | 0.17.0 |
    re.compile(r"(?im)^\s*(?P<name>[A-Za-z_][\w-]*)\s{2,}" + VERSION + r"\b"),  # pip list: triton   3.5.0+git
    re.compile(r"\b(?P<name>flashinfer|vllm|sglang|triton|torch|pytorch)[ =-]{1,2}" + VERSION + r"\b", re.I),
)
ARCHS = ((re.compile(r"\bsm_?120a?\b|\bSM ?12\.0\b|RTX PRO 6000|RTX 50[0-9]0", re.I), "sm120"),  # first: "SM120/SM121"
         (re.compile(r"\bsm_?121a?\b|\bSM ?12\.1\b|\bGB10\b|DGX Spark", re.I), "sm121"),
         (re.compile(r"\bsm_?90a?\b|\bH100\b|\bH200\b", re.I), "sm90"))
BYTES = re.compile(r"\b(\d{2,3}(?:,\d{3})|\d{5,6})\s*(?:B\b|bytes\b)")
LIMITS = {*SMEM_OPTIN_BYTES_BY_ARCH.values(), DEFAULT_SMEM_PER_BLOCK_BYTES, 102400}  # + SM120's per SM
THREAD = re.compile(r"github\.com/(?P<repo>[\w.-]+/[\w.-]+)/(?:issues|pull)/(?P<number>\d+)")
HEADER = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+) · (?:issue|pull request) #(?P<number>\d+)", re.M)
KERNEL = re.compile(r"`(?P<name>_?[A-Za-z][A-Za-z0-9_]*(?:Kernel|_kernel|_ogs|_fwd|_moe)[A-Za-z0-9_]*)`|"
                    r"\b(?P<bare>_?[a-z]+(?:_[a-z0-9]+)*_(?:ogs|kernel))\b|\b(?P<camel>[A-Z][A-Za-z0-9]+Kernel)\b")
KINDS = (  # the first that matches names the kind
    (re.compile(r"OutOfResources|out of resource: shared memory|triton\.runtime|@triton\.jit", re.I), "triton-smem"),
    (re.compile(r"cute[_ -]?dsl|CuTe DSL|_compute_stages|cute\.struct", re.I), "cute-dsl-smem"),
    (re.compile(r"CtaShape\d+x\d+x\d+B|tile configs?|tactics? \d+", re.I), "cutlass-tile-list"),
    (re.compile(r"TMA WS grouped gemm|Error Internal|GroupedGEMM|fused_moe_120", re.I), "static-smem"),
    (re.compile(r"vllm serve|VLLM_[A-Z_]+", re.I), "serve-vllm"),
    (re.compile(r"launch_server|sglang", re.I), "serve"),
)


@dataclass
class IssueFacts:
    threads: list[str] = field(default_factory=list)
    title: str = ""
    arch: str | None = None
    kernels: list[str] = field(default_factory=list)
    required_bytes: list[int] = field(default_factory=list)  # the figures the failing launch needed
    limit_bytes: list[int] = field(default_factory=list)  # the figures of the hardware
    versions: dict[str, str] = field(default_factory=dict)  # package name -> version
    kind: str | None = None
    quote: str | None = None  # the first error line naming a figure


def _first(values: list) -> list:
    return list(dict.fromkeys(values))


def read_issue(text: str) -> IssueFacts:
    facts = IssueFacts()
    facts.threads = _first([f"{m['repo']}#{m['number']}" for m in [*HEADER.finditer(text), *THREAD.finditer(text)]])
    title = re.search(r"^# (.+)$", text, re.M)
    facts.title = title.group(1).strip() if title else text.strip().splitlines()[0][:120] if text.strip() else ""
    for pattern, arch in ARCHS:
        if pattern.search(text):
            facts.arch = arch
            break
    for clue in CLUES:
        for match in clue.compiled.finditer(text):
            facts.versions.setdefault(PACKAGES.get(clue.component, clue.component), match.group(1))
    for pattern in PROSE_VERSIONS:
        for match in pattern.finditer(text):
            name = PACKAGES.get(match.group("name").lower())
            if name:
                facts.versions.setdefault(name, match.group(2))
    triton = re.search(TRITON_OUT_OF_RESOURCES.regex.replace("OutOfResources: ", r"(?:OutOfResources: )?"), text)
    figures = [int(n.replace(",", "")) for n in BYTES.findall(text)]
    if triton:
        figures = [int(triton.group(2)), int(triton.group(3)), *figures]
    for match in re.finditer(r"Required: (\d+), Hardware limit: (\d+)", text):
        figures += [int(match.group(1)), int(match.group(2))]
    facts.required_bytes = _first([n for n in figures if n not in LIMITS])
    facts.limit_bytes = _first([n for n in figures if n in LIMITS])
    facts.kernels = _first([m.group("name") or m.group("bare") or m.group("camel") for m in KERNEL.finditer(text)])[:5]
    facts.kind = next((kind for pattern, kind in KINDS if pattern.search(text)), None)
    quote = next((line.strip() for line in text.splitlines()
                  if re.search(r"Required: \d+|Allocated: \d+|\d{5,6} bytes|\d{5,6} B\b", line)), None)
    facts.quote = quote.lstrip("#> ").strip()[:300] if quote else None
    return facts
