"""The option tables the sglang and vLLM server doubles parse their command lines with, written from the wheels.

The doubles cannot read a wheel (they run where it is not installed): they read these files, made by reprokit's own
readers of the release's sources (``reprokit/upstream/args.py``, ``reprokit/upstream/vllm_args.py``), so an option the
release lacks is refused by the double as by the real program.
"""

from __future__ import annotations

import json
from pathlib import Path

from reprokit.upstream.args import OptionTable
from reprokit.upstream.vllm_args import bench_options, environment_variables, serve_options, vllm_wheel
from reprokit.workloads.static_smem.wheel import sha256_file


def write_sglang_tables(tables: dict[str, OptionTable], path: Path, wheel: Path) -> None:
    """The tables as one JSON file (``{name: table}``) with the wheel's sha256, for the sglang double's image."""
    doc = {"wheel": wheel.name, "wheel_sha256": sha256_file(wheel), **{k: t.to_json() for k, t in tables.items()}}
    path.write_text(json.dumps(doc, indent=1) + "\n")


def write_vllm_tables(version: str, path: Path, cache_dir: Path | None = None) -> None:
    """The serve and bench tables and the known variables as one JSON file, for the vLLM double."""
    _, known = environment_variables(version, cache_dir)
    doc = {"wheel": vllm_wheel(version, cache_dir).name, "serve": serve_options(version, cache_dir).to_json(),
           "bench": bench_options(version, cache_dir).to_json(), "environment_variables": sorted(known)}
    path.write_text(json.dumps(doc, indent=1) + "\n")
