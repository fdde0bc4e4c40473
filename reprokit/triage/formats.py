"""Every log string the triage recognises, defined once, each with a real example line.

Four tables:

- ``WRAPPER_FORMATS``: what log collectors and launchers put in front of a whole line
  (docker timestamps, compose, journald, a line counter, Ray), stripped first.
- ``LINE_FORMATS``: how a line starts (sglang's ``[date ranks] ``, FlashInfer's logger,
  vLLM's worker prefix, TensorRT-LLM's loggers, ...). They say where the message starts,
  its time, level and rank.
- ``CONTINUATION_FORMATS``: lines with no prefix that are known parts of a larger record
  (Python and C++ backtrace frames, NCCL debug output, Python warnings).
- ``PATTERNS`` (``patterns.py``): what a message says (readiness, an autotune tactic that
  failed, a CUDA error, a signal, ...). Each pattern's ``kind`` is the kind of event the
  parser emits; a new message family is one entry there, with its real example line.

The ``regex`` of a pattern is written in the subset shared by Python ``re`` and POSIX
ERE (``grep -E``): no ``\\d``, no ``(?:``, capture groups named by ``fields`` in order.
That is what lets the benchmark compare the triage with ``grep -cE`` on exactly the same
patterns, and lets the tests check every example with both engines.

Strings come from the upstream sources named in ``source``; see
``../shared/reference/UPSTREAM.md`` for the version differences.
"""


from __future__ import annotations

import re

from reprokit.triage.patterns import PATTERNS
from reprokit.triage.table_types import Family, LineFormat, LogPattern, Severity

__all__ = ["PATTERNS", "Family", "LineFormat", "LogPattern", "Severity"]

_SGLANG_TIME = r"(?P<ts>(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d|\d\d:\d\d:\d\d)"
# rank tags of sglang's prefix: DP, PP, TP, EP, and newer ATTN_CP, MOE_DP (scheduler.py)
SGLANG_RANK_TAG = re.compile(r"([A-Z]+(?:_[A-Z]+)*)(\d+)")

LINE_FORMATS: tuple[LineFormat, ...] = (
    LineFormat(
        "vllm_worker",
        r"\((?:(?P<worker>[A-Za-z][A-Za-z0-9_:./-]*)(?: rank=(?P<rank>\d+))? )?pid=\d+(?:, ip=[0-9.]+)?\) ?",
        "(Worker_DP0_EP0 pid=5825) INFO 08-18 06:59:59 [gpu_model_runner.py:4213] Model loading took 168.89 GiB memory",
        "vllm/utils/system_utils.py _add_prefix: f'({worker_name} pid={pid}) ' before every line of a worker "
        "(also Ray's '(RayWorkerWrapper pid=N, ip=A)', an unnamed actor's '(pid=N, ip=A)' and Ray Serve's "
        "'(ServeReplica:<app>:<deployment> pid=N)', whose names carry ':', '/', '-' and '.': ray #53267)",
    ),
    LineFormat(
        "torch_rank",
        r"\[rank(?P<rank>\d+)\]:",
        "[rank3]:[E0219 10:30:00.123456789 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught collective "
        "operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 "
        "milliseconds before timing out.",
        "torch.distributed elastic/c10d: '[rank<N>]:' before the stderr lines of rank N",
    ),
    LineFormat(
        "torchrun_tee",
        r"\[(?P<worker>[a-z_]+)(?P<rank>\d+)\]:",
        "[default0]:2026-12-06 03:18:41,877 - DEBUG - autotuner.py:2209 - flashinfer.jit: [Autotuner]: profiling "
        "<flashinfer.fused_moe.core.get_cutlass_fused_moe_module.<locals>.MoERunner object at 0x7fc95867d340> 1, "
        "shapes=((16, 1536), (256, 1024, 1536), (0,), (256, 1536, 512), (0,)), avg_time 1.02823677062",
        "torch/distributed/elastic/multiprocessing/tail_log.py: '[{role}{local_rank}]:' before every line of a worker "
        "that `torch.distributed.run --tee` copies to the console (role 'default' unless named; evidence/h200-ep-moe-n1)",
    ),
    LineFormat(
        "sglang",
        r"\[" + _SGLANG_TIME + r"(?P<ranks>(?: [A-Z]+(?:_[A-Z]+)*\d+)*)\] ",
        "[2026-02-19 10:05:12 TP3 EP3] Running FlashInfer autotune...",
        "sglang srt/utils common.py configure_logger: '[%(asctime)s{prefix}] %(message)s', "
        "datefmt '%Y-%m-%d %H:%M:%S' (newer '%m-%d %H:%M:%S'); prefix ' DP<n> PP<n> TP<n> EP<n>' (+ ATTN_CP, MOE_DP)",
    ),
    LineFormat(
        "sglang_untimed",
        r"\[(?P<ranks>[A-Z]+(?:_[A-Z]+)*\d+(?: [A-Z]+(?:_[A-Z]+)*\d+)*)\] ",
        "[TP0] Scheduler hit an exception: Traceback (most recent call last):",
        "sglang's prefix with the time left out (as pasted in sglang #26265)",
    ),
    LineFormat(
        "tensorrt_llm_python",
        r"\[(?P<ts>\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d)\] \[TRT-LLM\](?: \[RANK (?P<rank>\d+)\])? "
        r"\[(?P<level>[VIWEF])\] ",
        "[11/21/2024-10:26:10] [TRT-LLM] [I] Preparing to run throughput benchmark...",
        "tensorrt_llm/logger.py: '[%m/%d/%Y-%H:%M:%S] [TRT-LLM] [RANK n] [I] ' (TensorRT-LLM #2476)",
    ),
    LineFormat(
        "flashinfer",
        r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - (?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) - "
        r"(?:[^ ]+:\d+ - )?flashinfer\.jit: ",
        "2026-02-19 10:05:12,118 - INFO - autotuner.py:256 - flashinfer.jit: [Autotuner]: Autotuning process "
        "starts ...",
        "flashinfer/jit/core.py FlashInferJITLogger: "
        "'%(asctime)s - %(levelname)s - %(filename)s:%(lineno)d - flashinfer.jit: %(message)s'",
    ),
    LineFormat(
        "vllm",
        r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d\d-\d\d \d\d:\d\d:\d\d) \[?[^ \]]+:\d+\] ",
        "INFO 08-13 11:26:35 [gpu_model_runner.py:5483] Model loading took 168.89 GiB memory and 232.8 s",
        "vllm/logger.py: '%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s', datefmt '%m-%d %H:%M:%S'",
    ),
    LineFormat(
        "torch_c10",
        r"\[(?P<level>[EWIF])(?P<ts>\d{3,4} \d\d:\d\d:\d\d)\.\d+ [^\]]+\] ",
        "[E0219 10:30:00.123456789 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 "
        "milliseconds before timing out.",
        "c10/util/Logging glog-style prefix '[<E|W|I|F><MMDD> <HH:MM:SS.us> <file>:<line>] '",
    ),
    LineFormat(
        "logger_named",
        r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \[(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\] "
        r"(?P<logger>[A-Za-z_][\w.]*): ",
        "2026-06-07 10:59:31,659 [INFO] sglang.srt.managers.scheduler_metrics_mixin: Decode batch, #running-req: 1, "
        "#token: 227, token usage: 0.00, cuda graph: True, gen throughput (token/s): 126.29, #queue-req: 0,",
        "Python logging '%(asctime)s [%(levelname)s] %(name)s: %(message)s' (sglang-omni #712): the logger names "
        "the framework",
    ),
    LineFormat(
        "triton_server",
        r"(?P<level>[IWEF])(?P<ts>\d{4} \d\d:\d\d:\d\d)\.\d+ +\d+ [a-z_]+\.cc:\d+\] ",
        "I0304 23:43:40.717369 1 python_be.cc:2381] TRITONBACKEND_ModelInstanceInitialize: vllm_model_0_0 (MODEL "
        "device 0)",
        "Triton Inference Server's glog prefix '<I|W|E|F><MMDD> <time> <pid> <file>.cc:<line>] ' "
        "(triton-inference-server/server #6944)",
    ),
    LineFormat(
        "ray_glog",
        r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?P<level>[A-Z]) \d+ \d+\] [^ ]+:\d+: ",
        "[2024-07-25 10:46:00,050 E 24036 24036] logging.cc:440: *** SIGSEGV received at time=1721904360 on cpu 140 ***",
        "Ray's C++ logging '[date,ms L pid tid] file.cc:line: ', at a line's start (vllm #5495) or inside a worker's "
        "prefix (vllm #6783); not sglang's prefix, which has no ',ms' after its time",
    ),
    LineFormat(
        "ray_serve",
        r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?:[^ ]+ ){1,4}-- ",
        "INFO 2025-08-29 18:04:47,931 serve 519120 -- Application 'default' is ready at http://127.0.0.1:8000/.",
        "Ray Serve's logger '%(levelname)s %(asctime)s <component> <id> [<request id>] -- %(message)s' "
        "(ray/serve/_private/logging_utils.py; ray-project/ray #55754, #53267)",
    ),
    LineFormat(
        "tgi",
        r" ?(?P<level>TRACE|DEBUG|INFO|WARN|ERROR) +(?:[A-Za-z_][\w{}=-]*: )?"
        r"(?P<logger>text_generation_(?:launcher|router)\w*(?:::\w+)*): (?:[\w/.-]+\.rs:\d+: )?",
        "INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0",
        "TGI's launcher and router, Rust tracing lines '<RFC 3339>Z <LEVEL> [<span>: ]<target>: [<file>.rs:<line>: ]' "
        "(huggingface/text-generation-inference #2139, #2534); the time is stripped as a docker timestamp first",
    ),
    LineFormat(
        "rust_tracing",
        r" ?(?P<level>TRACE|DEBUG|INFO|WARN|ERROR) (?P<logger>[A-Za-z_][\w.]*(?:::\w+)*): ",
        "INFO model_runner.load_model: Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail "
        "mem=36.44 GB, mem usage=41.58 GB.",
        "Rust's tracing subscriber '<RFC 3339>Z <LEVEL, right-aligned> <target>: ', as NVIDIA Dynamo prints its own "
        "lines and its workers' Python loggers (module.function as the target; ai-dynamo/dynamo #4855); its time is "
        "stripped as a docker timestamp first",
    ),
    LineFormat(
        "uvicorn",
        r"(?=(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):\s)",
        "INFO:     Application startup complete.",
        "uvicorn default formatter '%(levelprefix)s %(message)s' (sglang puts '[%(asctime)s] ' in front)",
    ),
    LineFormat(
        "tensorrt_llm",
        r"(?=\[TensorRT-LLM\]\[(?P<level>ERROR|WARNING|INFO|DEBUG|VERBOSE|TRACE)\] )",
        "[TensorRT-LLM][INFO] Set logger level to INFO",
        "tensorrt_llm/common/logger.h: '[TensorRT-LLM][<LEVEL>] <message>'",
    ),
    LineFormat(
        "progress",
        r"%(?:[|]| Completed [|])",  # starts with a literal: the regex engine then scans fast
        "[AutoTuner]: Tuning trtllm::fused_moe::gemm1:  17%|█▋        | 1/6 [00:00<00:01,  3.76profile/s]",
        "tqdm progress bars (FlashInfer's autotuner, sglang's weight loading and CUDA graph capture), one "
        "line per refresh",
        anchored=False,
    ),
)

# Lines that carry no prefix of their own but are known parts of a larger record.
CONTINUATION_FORMATS: tuple[LineFormat, ...] = (
    LineFormat(
        "python_frame",
        r"  File \"[^\"]*\", line \d+",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2891, in run_scheduler_process',
        "CPython traceback.format_exception",
    ),
    LineFormat(
        "backtrace_frame",
        r"\d+ +0x[0-9a-fA-F]+ ",
        "3       0x7f3a1c42b8e5 "
        "tensorrt_llm::kernels::cutlass_kernels_oss::dispatchMoeGemmSelectTileShapeTmaWarpSpecialized"
        "<__nv_fp4_e2m1, __nv_fp4_e2m1, __nv_bfloat16, tensorrt_llm::cutlass_extensions::EpilogueOpDefault, "
        "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput::EpilogueFusion)0>"
        "(tensorrt_llm::kernels::cutlass_kernels::TmaWarpSpecializedGroupedGemmInput, int, "
        "tensorrt_llm::cutlass_extensions::CutlassGemmConfig, int, CUstream_st*, int*, unsigned long*) + 1253",
        "tensorrt_llm/common/tllmException.cpp getTrace: '%-3d %*p %s + %zd' per frame",
    ),
    LineFormat(
        "nccl_debug",
        r"[^ ]+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN)",
        "gpu-node-03:4711:4711 [3] NCCL INFO Bootstrap : Using eth0:10.1.0.13<0>",
        "NCCL debug output with NCCL_DEBUG=INFO or WARN",
    ),
    LineFormat(
        "python_warning",
        r"[^ ]+\.py:\d+: [A-Za-z]*Warning: ",
        "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:63: FutureWarning: "
        "The pynvml package is deprecated. Please install nvidia-ml-py instead.",
        "CPython warnings.formatwarning",
    ),
)


# Prefixes that other programs put in front of a server's lines (log collectors, terminals,
# launchers). They are stripped, outermost first, before the line's own format is read.
WRAPPER_FORMATS: tuple[LineFormat, ...] = (
    LineFormat(
        "docker_timestamp",
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) ",
        "2026-03-11T17:57:32.372145579Z (EngineCore_DP0 pid=269) Process EngineCore_DP0:",
        "docker logs --timestamps (runpod-workers/worker-vllm #276)",
    ),
    LineFormat(
        "compose",
        r"[A-Za-z0-9][A-Za-z0-9_.-]* +\| ",
        "vllm_gb10_server  | (APIServer pid=1) INFO 04-29 12:01:39 [launcher.py:37] Available routes are:",
        "docker compose logs: '<service> | ' (eugr/spark-vllm-docker #200)",
    ),
    LineFormat(
        "journald",
        r"[^ \d]{3,} +\d{1,2} \d\d:\d\d:\d\d [^ ]+ [A-Za-z0-9_.-]+\[\d+\]: ",
        "авг 18 14:15:04 llm python3[28059]: (EngineCore pid=28059) INFO 08-18 14:15:04 [vllm.py:1721] Cudagraph is "
        "disabled under eager mode",
        "journalctl's short format '<Mon> <d> <time> <host> <unit>[pid]: ', in the host's locale (1CatAI/1Cat-vLLM #237)",
    ),
    LineFormat(
        "line_counter",
        r"\[\d+\] (?=\[)",
        "[80749] [rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an "
        "error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL "
        "work: 1579.",
        "a line number in front of a pasted log (hiyouga/LlamaFactory #7396)",
    ),
    LineFormat(
        "datetime",
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?=\[rank\d+\]:|[A-Z]+:[a-z]|[IWEF]\d{4} \d\d:)",
        "2024-11-20 14:37:16 DEBUG:filelock:Lock 140341412642880 acquired on "
        "/root/.triton/autotune/Fp16Matmul_2d_kernel.pickle.lock",
        "a launcher's date in front of torchrun's '[rank<N>]:' or Python's basicConfig (QwenLM/Qwen3-Coder #174), "
        "or Docker Desktop's log view in front of a glog line ('2024-07-23 19:39:35 I0723 14:09:35.070084 1 ...', "
        "vllm #6697)",
    ),
    LineFormat(
        "k9s_pane",
        r"│ ",
        "│ INFO 03-21 20:15:44 [monitor.py:33] torch.compile takes 28.77 s in total                                 │",
        "a pod's log copied from k9s's log pane: '│ ' before and ' │' after every line "
        "(kubernetes-sigs/gateway-api-inference-extension #550); the parser drops the closing border too",
    ),
    LineFormat(
        "python_logging",
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [A-Za-z_][\w.]* - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - ",
        "2025-03-08 02:04:48,693 - __main__ - INFO - [2025-03-08 02:04:48 TP0] Scheduler hit an exception: "
        "Traceback (most recent call last):",
        "a calling program's Python logger re-logging a server's output: '%(asctime)s - %(name)s - %(levelname)s - ' "
        "(allenai/olmocr #105)",
    ),
    LineFormat(
        "lemonade",
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[(?:Debug|Info|Warn|Warning|Error|Fatal)\] \([A-Za-z]+\) ",
        "2026-05-08 11:47:02.257 [Error] (Process) (EngineCore pid=2651) ERROR 05-08 11:47:02 [core.py:1136] "
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 12.95 GiB.",
        "Lemonade server's log line '<date> <time>.ms [Level] (Component) ' in front of the output of the server it runs "
        "(lemonade-sdk/vllm-rocm #5)",
    ),
    LineFormat(
        "cloudwatch_csv",
        r"\d{13},",
        "1756144011375,(VllmWorker pid=96) ERROR 08-25 10:46:51 [multiproc_executor.py:559] WorkerProc failed to start.",
        "a CloudWatch log export as CSV: '<epoch ms>,<message>' (aws-samples/amazon-sagemaker-generativeai #111); "
        "strip_terminal_escapes has unquoted the field and decoded its '#033' and '#015' first",
    ),
)

# ANSI colours in caret notation, as 'cat -v' or a pager prints ESC ('^[[0;36m(Worker_TP0 pid=46727)^[[0;0m ERROR ...^M';
# a paste can lose a line's first '^'): removed with a trailing '^M' (flagos-ai/FlagTree #352)
_CARET_ANSI = re.compile(r"(?:\^\[|^\[)\[[0-9;]*m")
# the same written as syslog's octal escapes of control characters, ESC '#033' and CR '#015', as CloudWatch keeps them
# ('#033[1;36m(VllmWorker pid=96)#033[0;0m ERROR ... WorkerProc failed to start.#015', sagemaker-generativeai #111)
_OCTAL_ESCAPES = re.compile(r"#033\[[0-9;]*m|#015")
# a CloudWatch CSV export's quoted field: '<epoch ms>,"<message with "" for ">"'
_QUOTED_CSV_FIELD = re.compile(r'(\d{13},)"(.*)"$')


def strip_terminal_escapes(text: str) -> str:
    """What a terminal, a pager, a collector or a paste made of a line, undone before its wrappers are read: ANSI
    colours in caret or octal notation, a trailing CR, a CSV export's quoting, and tabs where spaces were
    (vllm-ascend #11083: a log copied through text recognition)."""
    if "\t" in text:
        text = text.replace("\t", " ")
    if text.endswith('"') and (field := _QUOTED_CSV_FIELD.match(text)) is not None:
        text = field.group(1) + field.group(2).replace('""', '"')
    if "#0" in text:
        text = _OCTAL_ESCAPES.sub("", text)
    if "^[" not in text and not text.startswith("[["):
        return text
    text = _CARET_ANSI.sub("", text)
    return text[:-2] if text.endswith("^M") else text


# Where a tqdm bar ends ('| 28/52 [00:04<00:03,  7.41it/s]'); text after it is a record of its own,
# written without a newline while the bar was drawn (vllm #25848, sglang #27537).
PROGRESS_BAR_END = re.compile(r"\| *\d+/\d+ \[[0-9:]+<[0-9:?]+,[^\]]*\]")
# a FlashInfer logger record that starts in the middle of a line (after a pytest test id: flashinfer #2882)
FLASHINFER_RECORD_START = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - (?:[^ ]+:\d+ - )?flashinfer\.jit: "
)

PATTERNS_BY_KIND: dict[str, LogPattern] = {p.kind: p for p in PATTERNS}
LINE_FORMATS_BY_NAME: dict[str, LineFormat] = {
    f.name: f for f in LINE_FORMATS + CONTINUATION_FORMATS + WRAPPER_FORMATS
}

SERVER_PATTERNS = tuple(p for p in PATTERNS if p.family == "server")
AUTOTUNER_PATTERNS = tuple(p for p in PATTERNS if p.family == "autotuner")
PROGRESS_PATTERNS = tuple(p for p in PATTERNS if p.family == "progress")
ERROR_PATTERNS = tuple(p for p in PATTERNS if p.family == "error")
EXCEPTION_TEXT_PATTERNS = tuple(p for p in PATTERNS if p.family == "exception_text")

# FlashInfer's MoE GEMM ops, as the autotuner names them (flashinfer/fused_moe/core.py choose_one)
MOE_GEMM_OP_OF_STAGE = {"1": "trtllm::fused_moe::gemm1", "2": "trtllm::fused_moe::gemm2"}

# TmaWarpSpecializedGroupedGemmInput::EpilogueFusion in FlashInfer's
# csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/include/moe_gemm_kernels.h
EPILOGUE_FUSION_NAMES = {0: "NONE", 1: "ACTIVATION", 2: "GATED_ACTIVATION", 3: "FINALIZE"}


# the patterns each line format's messages are matched against, in order
PATTERNS_FOR_FORMAT: dict[str, tuple[LogPattern, ...]] = {
    "sglang": SERVER_PATTERNS,
    "flashinfer": AUTOTUNER_PATTERNS + ERROR_PATTERNS,
    "vllm": SERVER_PATTERNS + ERROR_PATTERNS,
    "torch_c10": ERROR_PATTERNS,
    "uvicorn": SERVER_PATTERNS,
    "tensorrt_llm": ERROR_PATTERNS,
    "tensorrt_llm_python": SERVER_PATTERNS + ERROR_PATTERNS,
    "sglang_untimed": SERVER_PATTERNS,
    "progress": AUTOTUNER_PATTERNS + PROGRESS_PATTERNS,
    "logger_named": SERVER_PATTERNS + ERROR_PATTERNS,
    "triton_server": SERVER_PATTERNS + ERROR_PATTERNS,
    "ray_glog": ERROR_PATTERNS,
    **dict.fromkeys(("ray_serve", "tgi", "rust_tracing"), SERVER_PATTERNS + ERROR_PATTERNS),
    "bare": AUTOTUNER_PATTERNS + ERROR_PATTERNS,
}
