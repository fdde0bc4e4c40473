#!/usr/bin/env bash
# Docker engine, a local registry and the images the image/provisioning tests build on.
#   dockerd            Debian's docker.io, started by hand (overlay2 where the kernel allows it, else vfs), with the
#                      NVIDIA Container Toolkit's hook double on its PATH: `docker run --gpus all` works as on a GPU
#                      host and puts the libcuda double into the container (tests/doubles/README.md)
#   registry           Debian's docker-registry on 127.0.0.1:5000 (plain HTTP; Docker trusts loopback registries)
#   base image         a debootstrapped Debian bookworm (python3, venv, headers, g++), imported once and pushed
#                      to the registry as 127.0.0.1:5000/reprokit-test/bookworm:base; the tests build the real
#                      Dockerfiles with it in place of the CUDA and sglang bases (no registry can be pulled from in CI)
#   test host image    the base plus systemd and sshd: a GPU-less "host" with its own filesystem for ansible-playbook
# ansible-core and ansible-lint come from the dev lock (the venv). What the tests need is written to .cache/services/docker.env;
# when something cannot work here the reason goes to .cache/services/docker.unavailable and the tests skip with it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services
UNAVAILABLE=$STATE/docker.unavailable
ENV_FILE=$STATE/docker.env
DOCKER=/usr/bin/docker  # Debian's client: BuildKit built in (the client in /usr/local/bin, if any, may lack buildx)
REGISTRY=127.0.0.1:5000
REGISTRY_DATA=/var/lib/reprokit-test-registry
DOCKERD_LOG=/var/log/reprokit-dockerd.log
BASE=reprokit-test/bookworm:base
TESTHOST=reprokit-test/sshhost:latest-build
# Changing this list rebuilds the base (its hash is a label of the image).
BASE_PACKAGES=python3,python3-venv,python3-dev,g++,ca-certificates
PACKAGES=(docker.io docker-registry debootstrap openssh-client curl)

mkdir -p "$STATE"
rm -f "$UNAVAILABLE" "$ENV_FILE"
unavailable() { echo "$1" > "$UNAVAILABLE"; echo "docker unavailable: $1"; exit 0; }
log() { printf '[20-docker] %s\n' "$*"; }

[ "$(id -u)" = 0 ] || unavailable "needs root to install and start dockerd"

missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  # Debian's postinst scripts would start their own daemons where an init system runs; we start ours below.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    || unavailable "cannot install ${missing[*]} with apt-get"
fi

# --- dockerd -------------------------------------------------------------------------------------------
# dockerd registers its --gpus driver at start only if nvidia-container-runtime-hook is on its PATH.
HOOK_DIR=$PWD/tests/doubles/nvidia-container-toolkit
python3 -m tests.doubles.libcuda >/dev/null || unavailable "cannot build the libcuda double (gcc); see tests/doubles/README.md"
dockerd_pid=$(cat /var/run/docker.pid 2>/dev/null || true)
if [ -n "$dockerd_pid" ] && [ -r "/proc/$dockerd_pid/environ" ] \
    && ! tr '\0' '\n' < "/proc/$dockerd_pid/environ" | grep -q "^PATH=$HOOK_DIR:"; then
  log "restarting dockerd (pid $dockerd_pid) with the GPU hook double on its PATH"
  kill "$dockerd_pid"
  for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
fi
storage_driver() {  # overlay2 when this kernel lets us mount an overlay, else vfs (slow: a full copy per layer)
  local probe; probe=$(mktemp -d)
  mkdir -p "$probe"/{lower,upper,work,merged}
  if mount -t overlay overlay -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
    umount "$probe/merged"; rm -rf "$probe"; echo overlay2
  else
    rm -rf "$probe"; echo vfs
  fi
}

if ! "$DOCKER" info >/dev/null 2>&1; then
  driver=${REPROKIT_DOCKER_STORAGE_DRIVER:-$(storage_driver)}
  log "starting dockerd (storage driver $driver), log in $DOCKERD_LOG"
  PATH=$HOOK_DIR:$PATH setsid nohup dockerd --storage-driver="$driver" >>"$DOCKERD_LOG" 2>&1 < /dev/null &
  for _ in $(seq 1 60); do "$DOCKER" info >/dev/null 2>&1 && break; sleep 0.5; done
  "$DOCKER" info >/dev/null 2>&1 || unavailable "dockerd did not start; last lines of $DOCKERD_LOG: $(tail -n 3 "$DOCKERD_LOG" | tr '\n' ' ')"
fi

# Test hosts left by an interrupted run (the tests remove their own).
leftovers=$("$DOCKER" ps -aq --filter label=io.reprokit.test=host)
[ -z "$leftovers" ] || "$DOCKER" rm -f $leftovers >/dev/null

# --- registry --------------------------------------------------------------------------------------------
if ! curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1; then
  mkdir -p "$REGISTRY_DATA"
  cat > "$STATE/registry.yml" <<CFG
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $REGISTRY_DATA
  delete:
    enabled: true
http:
  addr: $REGISTRY
CFG
  log "starting docker-registry on $REGISTRY"
  setsid nohup docker-registry serve "$STATE/registry.yml" >>"$STATE/registry.log" 2>&1 < /dev/null &
  for _ in $(seq 1 40); do curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1 && break; sleep 0.25; done
  curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1 || unavailable "docker-registry did not answer on $REGISTRY; see $STATE/registry.log"
fi

# --- base image ------------------------------------------------------------------------------------------
recipe=$(printf 'bookworm minbase %s' "$BASE_PACKAGES" | sha256sum | cut -c1-16)
have=$("$DOCKER" image inspect --format '{{index .Config.Labels "io.reprokit.test.recipe"}}' "$BASE" 2>/dev/null || true)
if [ "$have" != "$recipe" ]; then
  root=$(mktemp -d /var/tmp/reprokit-bookworm.XXXXXX)
  log "debootstrapping Debian bookworm into $root (once; about a minute)"
  debootstrap --variant=minbase --include="$BASE_PACKAGES" bookworm "$root" http://deb.debian.org/debian \
    > "$STATE/debootstrap.log" 2>&1 || { rm -rf "$root"; unavailable "debootstrap failed; see $STATE/debootstrap.log"; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | "$DOCKER" import --change "LABEL io.reprokit.test.recipe=$recipe" --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf "$root"
fi
"$DOCKER" tag "$BASE" "$REGISTRY/$BASE"
"$DOCKER" push -q "$REGISTRY/$BASE" >/dev/null || unavailable "cannot push $BASE to the registry on $REGISTRY"
base_digest=$("$DOCKER" image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$REGISTRY/$BASE" \
  | sed -n "s|^$REGISTRY/${BASE%%:*}@||p" | head -n 1)
[ -n "$base_digest" ] || unavailable "the registry gave no digest for $REGISTRY/$BASE"

# --- test host image (systemd + sshd on the base) ----------------------------------------------------------
DOCKER_BUILDKIT=1 "$DOCKER" build -q --build-arg "BASE_IMAGE=$REGISTRY/${BASE%%:*}@$base_digest" \
  -f tests/integration/provision/testhost.Dockerfile -t "$TESTHOST" tests/integration/provision > "$STATE/testhost-build.log" 2>&1 \
  || unavailable "cannot build the test host image; see $STATE/testhost-build.log"

cat > "$ENV_FILE" <<ENV
DOCKER_CLI=$DOCKER
REGISTRY=$REGISTRY
BASE_IMAGE=$REGISTRY/${BASE%%:*}
BASE_TAG=${BASE##*:}
BASE_DIGEST=$base_digest
TESTHOST_IMAGE=$TESTHOST
STORAGE_DRIVER=$("$DOCKER" info --format '{{.Driver}}')
ENV
log "ready: $(tr '\n' ' ' < "$ENV_FILE")"
