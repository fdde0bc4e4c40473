#!/usr/bin/env bash
# The Triton shared-memory kits (triton-moe-configs, triton-mla-decode) on a GPU machine with the kits' own
# command, on the built-in host `local`: the workloads compile with that machine's own Triton (the host's
# Python is the one running this script). Leaves the records and each console log in $OUT.
#
# Carried with the tree (ignored folders): .whl/*.whl (the control plane's wheels for the machine's Python,
# as for h200_over_ssh.sh) and .cache/h200-ssh/reprokit-cache/wheels/sglang-<pin>-py3-none-any.whl (the
# control machine's cache: the kits read sglang's configurations and kernels from the pinned wheel).
# Environment: PY (default /opt/torch/.venv/bin/python3, the Python with torch and Triton).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/h200-triton-out}
PY=${PY:-/opt/torch/.venv/bin/python3}
mkdir -p "$OUT"
if ! "$PY" -c 'import fabric, pydantic, rich, invoke' 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
export REPROKIT_CACHE=$ROOT/.cache/h200-ssh/reprokit-cache
RUNS=${RUNS:-/tmp/h200-triton-runs}  # outside $OUT: only the packed records come back
mkdir -p "$RUNS"
"$PY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(0))' \
    | tee "$OUT/summary.txt"
for kit in triton-moe-configs triton-mla-decode; do
    start=$(date +%s)
    "$PY" -m invoke repro "$kit" --runs-dir "$RUNS" > "$OUT/$kit.log" 2>&1
    echo "$kit: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
    tail -n 3 "$OUT/$kit.log"
done
# Two files come back at most two folders down: pack the records.
tar -C "$RUNS" -czf "$OUT/records.tar.gz" .
