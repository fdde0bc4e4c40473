"""Test double of `python -m sglang.launch_server`: replays an upstream-format log, then serves /health and /generate."""

import gzip
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sglang._upstream import parser

READY = "The server is fired up and ready to roll!"
LOG = "/usr/share/sglang-double/server-log.gz"
# Greedy continuations a real model gives to the serve step's checked prompts (reprokit/workloads/answers.py).
ANSWERS = {"The capital of France is": " Paris. It is also the largest city in the country.",
           "Question: What is 12 + 30? Answer:": " 42",
           "The chemical symbol for gold is": " Au, from the Latin word aurum."}
# REPROKIT_DOUBLE_ANSWERS=degenerate: answer as corrupted tactics do (flashinfer issue 4841), runs of one token.
DEGENERATE = os.environ.get("REPROKIT_DOUBLE_ANSWERS") == "degenerate"
# REPROKIT_DOUBLE_FATAL=autotune: a scheduler dies inside FlashInfer's autotune (a real traceback, sglang PR 12306),
# and the double then stays up without answering: only a wait that reads the log can stop before its timeout,
# whether or not a real server exits after such a line.
FATAL_DURING = os.environ.get("REPROKIT_DOUBLE_FATAL")
FATAL_LOG = "/usr/share/sglang-double/fatal.log"
AUTOTUNE_BEGIN, AUTOTUNE_END = "Running FlashInfer autotune", "FlashInfer autotune completed."


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's naming
        if self.path == "/health":
            self._send(200, {})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/generate":
            self._send(404, {"error": "not found"})
            return
        wanted = int((request.get("sampling_params") or {}).get("max_new_tokens", 16))
        time.sleep(0.005)
        text = ANSWERS.get(str(request.get("text", "")).strip(), " Paris" + " ." * (wanted - 1))
        if DEGENERATE:
            text = "!" * wanted
        self._send(200, {"text": text, "meta_info": {"completion_tokens": wanted,
                                                                             "prompt_tokens": len(str(request.get("text", "")).split())}})

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # the benchmark opens up to 32 connections at once
    daemon_threads = True


def load_model_config(model_path):
    """What sglang does first with --model-path: read the model's config.json (transformers' AutoConfig)."""
    try:
        with open(os.path.join(model_path, "config.json")) as fh:
            return json.load(fh)
    except OSError as exc:
        print("Traceback (most recent call last):\n  (sglang test double)", flush=True)
        print(f"OSError: Can't load the configuration of '{model_path}': {exc}", flush=True)
        sys.exit(1)


def main():
    args = parser("server_args", "launch_server.py").parse_args()  # exits 2 on a flag 0.5.9 does not have
    print(f"[double] sglang test double: {' '.join(sys.argv[1:])}", flush=True)
    config = load_model_config(args.model_path)
    print(f"[double] model config {args.model_path}/config.json: architectures {config.get('architectures')},"
          f" {config.get('num_hidden_layers')} layers", flush=True)
    args.port = int(args.port or 30000)
    args.host = args.host or "127.0.0.1"
    with gzip.open(LOG, "rt", encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    if args.disable_flashinfer_autotune:  # sglang then never enters FlashInfer's autotuner during warmup
        begin = next((i for i, line in enumerate(lines) if AUTOTUNE_BEGIN in line), None)
        end = max((i for i, line in enumerate(lines) if AUTOTUNE_END in line), default=None)
        if begin is not None and end is not None:
            lines = lines[:begin] + lines[end + 1:]
    if FATAL_DURING == "autotune":
        begin = next(i for i, line in enumerate(lines) if AUTOTUNE_BEGIN in line)
        with open(FATAL_LOG, encoding="utf-8") as fh:
            lines = lines[:begin + 1] + fh.read().splitlines()
        for line in lines:
            print(line, flush=True)
        hang()
        return
    ready_at = next((i for i, line in enumerate(lines) if READY in line), len(lines))
    for line in lines[:ready_at]:
        print(line, flush=True)
    server = Server((args.host, args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for line in lines[ready_at:]:
        print(line, flush=True)
    hang()


def hang():
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
