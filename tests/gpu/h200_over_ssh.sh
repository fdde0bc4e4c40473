#!/usr/bin/env bash
# The kits on a GPU host reached over a real OpenSSH server: the control plane and the GPU host are the same
# machine, joined by sshd on 127.0.0.1 (recipe: ../shared/reference/H200-SSH.md). Runs
#   invoke repro KIT --host h200 for each of $KITS (default: smem-probe tile-sweep ep8-crash), and
#   invoke provision --host h200 --check (PROVISION=0 leaves it out)
# with reprokit's own inventory and known_hosts (the first run accepts the new host key, the rest are strict),
# and leaves the records, the provisioning log and a summary in $OUT (default ./h200-ssh-out).
#
# Carried with the tree (ignored folders): .cache/h200-ssh/debs/*.deb (Debian 12: openssh-server,
# openssh-sftp-server, openssh-client, libwrap0, libnsl2, libtirpc3; `apt-get download`), .whl/*.whl (the
# control plane's wheels from requirements.lock plus ansible-core and resolvelib, for the machine's Python),
# and .cache/h200-ssh/reprokit-cache/wheels/flashinfer_python-<pin>-py3-none-any.whl: the control machine's
# cache, from which the kits stage the wheel onto the (offline) host themselves.
#
# Environment: KITS, PROVISION (above), PY (the control plane's Python, default python3), HOST_PY (the host's Python over SSH, default
# /opt/torch/.venv/bin/python3), SSH_PORT (2222), GPU_ARCH (sm90), GPU_COUNT (1).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/h200-ssh-out}
PY=${PY:-python3}
HOST_PY=${HOST_PY:-/opt/torch/.venv/bin/python3}
SSH_PORT=${SSH_PORT:-2222}
WORK=${WORK:-/tmp/h200-ssh}
SSH_ROOT=/opt/ssh
mkdir -p "$OUT" "$WORK"
rm -rf "$WORK/runs" "$WORK/host"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

# -- the control plane's packages ----------------------------------------------------------------------------
if ! "$PY" -c 'import fabric, pydantic, rich, invoke' 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
export REPROKIT_CACHE=$ROOT/.cache/h200-ssh/reprokit-cache  # the control machine's cache: the FlashInfer wheel

# -- a real OpenSSH server on 127.0.0.1 ------------------------------------------------------------------------
if [ ! -x "$SSH_ROOT/usr/sbin/sshd" ]; then
    for deb in .cache/h200-ssh/debs/*.deb; do dpkg -x "$deb" "$SSH_ROOT" || exit 1; done
fi
export LD_LIBRARY_PATH=$SSH_ROOT/lib/x86_64-linux-gnu:$SSH_ROOT/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$SSH_ROOT/usr/bin:$PATH  # the bulk pull-back and ansible use the OpenSSH client
id sshd >/dev/null 2>&1 || useradd -r -d /run/sshd -s /usr/sbin/nologin sshd
mkdir -p /run/sshd
[ -f "$WORK/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key"
[ -f "$WORK/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$WORK/id_ed25519"
cp "$WORK/id_ed25519.pub" "$WORK/authorized_keys"
cat > "$WORK/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
UsePAM no
StrictModes no
PidFile $WORK/sshd.pid
Subsystem sftp $SSH_ROOT/usr/lib/openssh/sftp-server
EOF
if [ -f "$WORK/sshd.pid" ] && kill -0 "$(cat "$WORK/sshd.pid")" 2>/dev/null; then kill "$(cat "$WORK/sshd.pid")"; sleep 1; fi
"$SSH_ROOT/usr/sbin/sshd" -f "$WORK/sshd_config" -E "$WORK/sshd.log" || { cat "$WORK/sshd.log"; exit 1; }
log "sshd $("$SSH_ROOT/usr/sbin/sshd" -V 2>&1 | head -1) on 127.0.0.1:$SSH_PORT"

# -- reprokit's own inventory and known_hosts --------------------------------------------------------------
INV=$WORK/inventory.yml
KNOWN=$WORK/known_hosts
rm -f "$KNOWN"
cat > "$INV" <<EOF
all:
  hosts:
    h200:
      ansible_host: 127.0.0.1
      ansible_port: $SSH_PORT
      ansible_user: root
      ansible_ssh_private_key_file: $WORK/id_ed25519
      ansible_python_interpreter: $HOST_PY
      runtime: native
      gpu_arch: ${GPU_ARCH:-sm90}
      gpu_count: ${GPU_COUNT:-1}
      workdir: $WORK/host
      ansible_become: false  # we log in as root: no sudo needed (or installed)
      offline: true
EOF
cp "$INV" "$OUT/inventory.yml"
invoke_() { "$PY" -m invoke --search-root "$ROOT" "$@"; }
run_kit() {  # run_kit KIT [flags]: one repro over SSH; its exit code is recorded
    local kit=$1; shift
    log "invoke repro $kit --host h200 $*"
    invoke_ repro "$kit" --host h200 --inventory "$INV" --known-hosts "$KNOWN" --runs-dir "$WORK/runs" "$@" \
        2>&1 | tee "$OUT/$kit.log"
    log "exit code of $kit: ${PIPESTATUS[0]}"
    tar -czf "$OUT/records.tar.gz" -C "$WORK/runs" .  # after each kit: what ran comes back even if a later one overruns
}
started=$(date +%s)
first=--accept-new-host-key  # the first run accepts the new host key; the others check it
for kit in ${KITS:-smem-probe tile-sweep ep8-crash}; do
    run_kit "$kit" $first
    first=
done
if [ "${PROVISION:-1}" = 1 ]; then
    log "invoke provision --host h200 --check"
    invoke_ provision --host h200 --check --inventory "$INV" --known-hosts "$KNOWN" 2>&1 | tee "$OUT/provision-check.log"
    log "exit code of provision --check: ${PIPESTATUS[0]}"
fi
log "known_hosts written by reprokit: $(cut -d' ' -f1,2 "$KNOWN")"
log "host cache: $(find "$WORK/host/cache" -type f -name '*.whl' | sed "s|$WORK/host|<workdir>|")"
log "total $(( $(date +%s) - started )) s"
kill "$(cat "$WORK/sshd.pid")" 2>/dev/null
exit 0
