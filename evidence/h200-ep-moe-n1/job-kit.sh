#!/bin/bash
# The second GPU job: the kit itself, `invoke repro ep-moe-autotune` on the machine's own (local) host, the control
# plane from carried wheels, the reduced module the first job built carried gzipped and put in FlashInfer's JIT
# workspace first (same release, same arch), so the step loads it instead of building. Records go to /tmp/ep8k.
# Layout of the folder holding this file: tree/ (the branch's files: tasks.py, kits/, reprokit/, ...), whl/
# (flashinfer-python 0.6.18, apache-tvm-ffi 0.1.15.post2), cp/ (requirements.lock's wheels, without ansible),
# module/fused_moe_90_reprokit_bf16.so.gz.
R=/tmp/ep8k
mkdir -p "$R"
cd "$(dirname "$0")" || exit 1
HERE=$PWD
echo "start $(date -u +%FT%TZ)" > "$R/job-status"
PY=python3
"$PY" -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python3
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl cp/*.whl > "$R/pip.txt" 2>&1
export PYTHONPATH="$HERE/tree:/tmp/site" PATH="/tmp/site/bin:$PATH" PYTHONUNBUFFERED=1 MAX_JOBS=16 FLASHINFER_WORKSPACE_BASE=/tmp/fiws
{ nvidia-smi -L; nproc; "$PY" -c 'import sys, flashinfer, torch, reprokit, invoke; print(sys.executable, flashinfer.__version__, torch.__version__, reprokit.__file__, invoke.__version__)'; } > "$R/host.txt" 2>&1
mkdir -p /tmp/ep8-module && gunzip -c module/fused_moe_90_reprokit_bf16.so.gz > /tmp/ep8-module/fused_moe_90_reprokit_bf16.so
"$PY" -c 'import json, sys; from reprokit.workloads.ep_moe.prebuilt import place
print(json.dumps(place({"library": sys.argv[1], "flashinfer": "0.6.18", "arch": "sm90"}, "0.6.18", "sm90")))' \
  /tmp/ep8-module/fused_moe_90_reprokit_bf16.so > "$R/prebuilt.json" 2>&1
cd tree || exit 1
"$PY" -m invoke repro ep-moe-autotune > "$R/repro.log" 2>&1
echo "rc=$? $(date -u +%FT%TZ)" > "$R/done"
cp -r runs "$R/"
