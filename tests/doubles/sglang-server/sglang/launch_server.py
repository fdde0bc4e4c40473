"""Test double of `python -m sglang.launch_server`: replays an upstream-format log, then serves /health and /generate."""

import argparse
import gzip
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

READY = "The server is fired up and ready to roll!"
LOG = "/usr/share/sglang-double/server-log.gz"


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
        self._send(200, {"text": " Paris" + " ." * (wanted - 1), "meta_info": {"completion_tokens": wanted,
                                                                             "prompt_tokens": len(str(request.get("text", "")).split())}})

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # the benchmark opens up to 32 connections at once
    daemon_threads = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000)
    args, _ = parser.parse_known_args()
    print(f"[double] sglang test double: {' '.join(sys.argv[1:])}", flush=True)
    with gzip.open(LOG, "rt", encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    ready_at = next((i for i, line in enumerate(lines) if READY in line), len(lines))
    for line in lines[:ready_at]:
        print(line, flush=True)
    server = Server((args.host, args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for line in lines[ready_at:]:
        print(line, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
