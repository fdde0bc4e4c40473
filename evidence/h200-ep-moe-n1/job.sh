#!/bin/bash
# The whole GPU job, started under setsid by the call so that it can outlive it; records go to /tmp/ep8.
# Runs from the folder holding this file, which holds the branch's reprokit package, the carried wheels and,
# from the second run on, module/*.so.gz: the reduced fused-MoE module the first run built (same release, arch).
R=/tmp/ep8
mkdir -p "$R"
cd "$(dirname "$0")" || exit 1
echo "start $(date -u +%FT%TZ)" > "$R/job-status"
PY=python3
"$PY" -c 'import torch' 2>/dev/null || PY=/opt/torch/.venv/bin/python3
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl > "$R/pip.txt" 2>&1
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1 MAX_JOBS=16 FLASHINFER_WORKSPACE_BASE=/tmp/fiws
{ nvidia-smi; nvidia-smi -L; nproc; "$PY" -c 'import sys, flashinfer, torch, tvm_ffi, reprokit; print(sys.executable, flashinfer.__version__, torch.__version__, tvm_ffi.__version__, reprokit.__file__)'; } > "$R/host.txt" 2>&1
gpus=$(nvidia-smi -L | grep -c '^GPU ')
prebuilt=""
for gz in module/*.so.gz; do
  [ -f "$gz" ] || continue
  mkdir -p /tmp/ep8-module && gunzip -c "$gz" > "/tmp/ep8-module/$(basename "$gz" .gz)"
  prebuilt=", \"prebuilt_module\": {\"library\": \"/tmp/ep8-module/$(basename "$gz" .gz)\", \"flashinfer\": \"0.6.18\", \"arch\": \"sm90\"}"
done
cat > "$R/params.json" <<JSON
{"world_size": $gpus,
 "blocklist": {"trtllm::fused_moe::gemm1::MoERunner": [2, 5], "trtllm::fused_moe::gemm2::MoERunner": [47]},
 "scenario_timeout_s": 150, "build_timeout_s": 590$prebuilt}
JSON
"$PY" -m reprokit.workloads.ep_moe --params "$R/params.json" --out-dir "$R/out" > "$R/stdout.txt" 2> "$R/stderr.txt"
echo "rc=$? $(date -u +%FT%TZ)" > "$R/done"
