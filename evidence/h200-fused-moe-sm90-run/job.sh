#!/bin/bash
# The whole H200 job, started under setsid by the first device call; its records go to /tmp/results.
# Runs from the folder holding this file, which holds the branch's reprokit package (first on sys.path).
R=/tmp/results
mkdir -p "$R"
cd "$(dirname "$0")" || exit 1
export PYTHONUNBUFFERED=1 MAX_JOBS=16 FLASHINFER_WORKSPACE_BASE=/tmp/fiws
echo "start $(date -u +%FT%TZ)" > "$R/job-status"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$R/nvidia-smi.txt" 2>&1
python3 -c 'import flashinfer, torch, tvm_ffi, reprokit; print(flashinfer.__version__, torch.__version__, tvm_ffi.__version__, reprokit.__file__)' >> "$R/nvidia-smi.txt" 2>&1
python3 -m reprokit.workloads.static_smem.device_check --dtype bf16 --out-dir "$R" --deadline-s "${DEADLINE:-1060}" \
  --blocklist blocked=tactics-blocklist.json --skip-op trtllm::fused_moe::gemm1 \
  --predicted predicted-0.6.18-sm90-bf16.json > "$R/device-check-stdout.txt" 2>&1
echo "rc=$? $(date -u +%FT%TZ)" > "$R/done"
