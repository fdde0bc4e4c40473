"""Patterns of the serving stacks claimed beside sglang, vLLM and TensorRT-LLM: TGI's launcher and router, and
Triton Inference Server's model table.

Part of the one pattern table (``patterns.PATTERNS`` splices them in), each with a real example line. Both stacks
write few, regular lines about their own life: TGI's launcher (Rust, tracing lines ``<time>Z  INFO shard-manager:
text_generation_launcher: ...``) starts, waits for and reports its shards, its router says ``Connected`` once the
shards answer, and the launcher exits with one ``Error: <LauncherError>`` line; Triton prints a table of its
models' states once loading ends (``| name | version | READY |``), before its endpoints start.

Other stacks are not read, only recognised (``UNCLAIMED``: llama.cpp's server, Ollama, LMDeploy): a log of theirs is
INCONCLUSIVE, naming the stack, rather than read as a claimed server that is "still starting".
"""

from __future__ import annotations

from reprokit.triage.table_types import LogPattern

_TGI_LAUNCHER = "huggingface/text-generation-inference launcher/src/main.rs"
_TGI_ROUTER = "huggingface/text-generation-inference router/src/server.rs"

STACK_PATTERNS: tuple[LogPattern, ...] = (
    # --- TGI: its life, read on the 'tgi' line format (launcher and router tracing lines)
    LogPattern(
        "tgi_router_connected", r"Connected$", (),
        "2024-09-23T12:10:56.485234Z  INFO text_generation_router::server: router/src/server.rs:2477: Connected",
        _TGI_ROUTER + ": the router reached every shard and serves (huggingface/text-generation-inference #2534)",
        lead="Connected", on_sglang_lines=False,
    ),
    LogPattern(
        "tgi_waiting_for_shard", r"Waiting for shard to be ready\.\.\.", (),
        "2024-06-28T11:28:38.027759Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... "
        "rank=0",
        _TGI_LAUNCHER + " shard_manager: a shard is still loading its weights (text-generation-inference #2139)",
        lead="Waiting for shard", on_sglang_lines=False,
    ),
    LogPattern(
        "tgi_shard_failed_to_start", r"Shard ([0-9]+) failed to start", ("rank",),
        "2023-10-16T06:54:28.059380Z ERROR text_generation_launcher: Shard 0 failed to start",
        _TGI_LAUNCHER + ": a shard died while starting; the launcher shuts the others down (#1156)",
        severity="fatal", fatal_family="tgi_shard_failed", lead="Shard ", on_sglang_lines=False,
    ),
    LogPattern(
        "tgi_shard_signaled", r"Shard process was signaled to shutdown with signal ([0-9]+)", ("signal",),
        "2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to "
        "shutdown with signal 4 rank=0",
        _TGI_LAUNCHER + " shard_manager: the shard's process was killed by a signal (4: SIGILL; #1627)",
        severity="fatal", fatal_family="signal", lead="Shard process", on_sglang_lines=False,
    ),
    # the launcher's exit: 'Error: <LauncherError>' on stderr, no prefix (launcher/src/main.rs LauncherError)
    LogPattern(
        "tgi_launcher_error",
        r"^Error: (ShardCannotStart|ShardDisconnected|ShardFailed|WebserverFailed|WebserverCannotStart|DownloadError)$",
        ("error",), "Error: WebserverFailed",
        _TGI_LAUNCHER + " main's Result: the launcher gave up and shut its shards down (#2828, #1156, #1627)",
        family="error", severity="fatal", fatal_family="tgi_launcher_exit",
    ),
    # --- Triton Inference Server's model table (server.cc), a bare table row
    LogPattern(
        "triton_model_ready", r"^[|] ([A-Za-z0-9_.-]+) +[|] ([0-9]+) +[|] READY +[|]$", ("model", "version"),
        "| resnet50 | 1       | READY  |",
        "triton-inference-server/server src/server.cc model status table, printed once loading ends: a model that "
        "loaded (triton-inference-server/server #6738, #5677, #2477)", family="error",
    ),
)

# stacks recognised but not read: a line of theirs names the stack (rule 'unclaimed_stack' in rules.py)
UNCLAIMED: dict[str, str] = {"unclaimed_llama_cpp": "llama.cpp's server", "unclaimed_ollama": "Ollama",
                             "unclaimed_lmdeploy": "LMDeploy"}
UNCLAIMED_PATTERNS: tuple[LogPattern, ...] = (
    LogPattern(
        "unclaimed_llama_cpp", r"^(llama_model_loader: |srv +[a-z_]+: |main: HTTP server is listening)", (None,),
        "srv    load_model: loading model 'C:\\Users\\lavan\\win-x64\\External\\Models\\phi-3.5-mini-instruct.gguf'",
        "ggml-org/llama.cpp tools/server/server.cpp and src/llama-model-loader.cpp (llama.cpp #18546)", family="error",
    ),
    LogPattern(
        "unclaimed_ollama", r"level=[A-Z]+ source=[a-z_]+[.]go:[0-9]+ msg=", (),
        'time=2025-03-05T06:58:54.116Z level=INFO source=server.go:380 msg="starting llama server" cmd="/usr/bin/ollama '
        'runner --model /root/.ollama/models/blobs/sha256-8c625c9569c3c799f5f9595b5a141f91d224233055608189d66746347c14e613"',
        "ollama/ollama llm/server.go, Go's slog text handler (ollama #9509)", family="error",
    ),
    LogPattern(
        "unclaimed_lmdeploy", r"lmdeploy - (INFO|WARNING|ERROR) - ", (None,),
        "lmdeploy - ERROR - base.py:53 - RuntimeError: Internal Triton PTX codegen error: ptxas fatal : Value 'sm_120' "
        "is not defined for option 'gpu-name'",
        "InternLM/lmdeploy lmdeploy/utils.py logger '%(name)s - %(levelname)s - %(filename)s:%(lineno)d - ' "
        "(lmdeploy #3410)", family="error",
    ),
)
