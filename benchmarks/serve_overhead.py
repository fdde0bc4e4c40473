"""reprokit's overhead on a real serve: `invoke repro vllm-cpu-moe` against the same server run by hand.

Both sides on this machine, in one run, one after the other (never two servers at once), with the engine of
tests/services/up.d/50-vllm.sh (vLLM's CPU build) and its tiny MoE:
  by hand   `vllm serve` with the kit's flags and environment, poll /health, `vllm bench serve` with the kit's
            benchmark, SIGTERM, wait until every process of the server is gone;
  reprokit  `invoke repro vllm-cpu-moe` on the local host: fingerprint, the serve step (the same server, the same
            benchmark, plus the smoke request), the triage, the judge, both reports, the record's hashes.
The command lines of the hand side are the serve workload's own (``server_command``, ``bench_command``), from the
kit's parameters: one source, so both sides run the same server. Prints each wall time and their ratio.
Goal (issue #35): ratio <= 1.15 on the same machine. Usage: python benchmarks/serve_overhead.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reprokit.config.kit import load_kit  # noqa: E402
from reprokit.workloads import serve_vllm  # noqa: E402

ENV_FILE = REPO / ".cache" / "services" / "vllm.env"
KIT = "vllm-cpu-moe"


def engine() -> dict[str, str]:
    if not ENV_FILE.exists():
        sys.exit(f"{ENV_FILE}: missing; run tests/services/up.d/50-vllm.sh first")
    return dict(line.split("=", 1) for line in ENV_FILE.read_text().splitlines() if "=" in line)


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def by_hand(params: dict, vllm: str, out_dir: Path) -> float:
    """The kit's server and benchmark as a person would run them; wall seconds from start to every process gone."""
    merged = serve_vllm.merged_params(params)
    port, model = int(merged["port"]), str(merged["model"])
    env = dict(os.environ, **{k: str(v) for k, v in merged["env"].items()})
    started = time.monotonic()
    with open(out_dir / "server.log", "wb") as log:
        server = subprocess.Popen(serve_vllm.server_command(merged, vllm), stdout=log, stderr=subprocess.STDOUT,
                                  env=env, start_new_session=True)
        while not healthy(port):
            if server.poll() is not None:
                sys.exit(f"the server exited ({server.returncode}); see {out_dir / 'server.log'}")
            time.sleep(1)
        for concurrency in merged["bench"]["concurrencies"]:
            subprocess.run(serve_vllm.bench_command(vllm, port, model, merged["bench"], concurrency, out_dir),
                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True)
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        while subprocess.run(["pgrep", "-s", str(server.pid)], capture_output=True).returncode == 0:
            time.sleep(0.1)
    return time.monotonic() - started


def with_reprokit(models_dir: str, vllm: str, port: int, out_dir: Path) -> float:
    inventory = out_dir / "inv.yml"
    inventory.write_text(f"all:\n  hosts:\n    here:\n      ansible_connection: local\n      runtime: native\n"
                         f"      models_dir: {models_dir}\n      workdir: {out_dir / 'work'}\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "repro", KIT, "--inventory",
                           str(inventory), "--host", "here", "--runs-dir", str(out_dir / "runs"), "--json", "--quiet",
                           "--set", f"serve.vllm={vllm}", "--set", f"serve.port={port}"],
                          capture_output=True, text=True, cwd=REPO)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"invoke repro {KIT} exited {proc.returncode}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="pairs of runs (hand, reprokit), alternating")
    args = parser.parse_args()
    env = engine()
    vllm = str(Path(env["VLLM_TEST_VENV"]) / "bin" / "vllm")
    kit, _ = load_kit(KIT, REPO / "kits")
    step = next(s for s in kit.steps if s.name == "serve")
    port = 18471
    params = {**step.with_, "model": f"{env['VLLM_TEST_MODELS_DIR']}/{step.with_['model']}", "port": port}
    pairs = []
    with tempfile.TemporaryDirectory(prefix="serve-overhead-") as tmp:
        for index in range(args.repeats):
            hand_dir, kit_dir = Path(tmp, f"hand-{index}"), Path(tmp, f"kit-{index}")
            hand_dir.mkdir()
            kit_dir.mkdir()
            hand_s = by_hand(params, vllm, hand_dir)
            repro_s = with_reprokit(env["VLLM_TEST_MODELS_DIR"], vllm, port, kit_dir)
            pairs.append((hand_s, repro_s))
            print(f"pair {index + 1}: by hand {hand_s:.1f} s, reprokit {repro_s:.1f} s, ratio {repro_s / hand_s:.2f}x")
    hand_total, repro_total = sum(h for h, _ in pairs), sum(r for _, r in pairs)
    print(json.dumps({"engine": env["VLLM_TEST_VERSION"], "kit": KIT, "pairs": len(pairs),
                      "by_hand_s": round(hand_total, 1), "reprokit_s": round(repro_total, 1),
                      "ratio": round(repro_total / hand_total, 3)}))


if __name__ == "__main__":
    main()
