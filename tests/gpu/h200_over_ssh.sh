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
# FANOUT=N (default off) then times each kit of FANOUT_KITS (default smem-probe; the GPU-per-host run of issue #41 is
# FANOUT_KITS="smem-probe tile-sweep" on an 8-GPU machine) on 1 host and on N inventory hosts behind the same sshd
# (each its own workdir and lock, host gI pinned to GPU (I-1) mod the machine's GPUs by cuda_visible_devices:
# fanout_inventory.sh), in turn, REPEATS times (default 3): the fan-out ratio on a host with cores to spare;
# FANOUT_ARGS are added to each of those repro commands (`--skip probe`: the control plane's part alone, no GPU work).
#
# Environment: KITS, PROVISION, FANOUT, REPEATS (above), PY (the control plane's Python, default python3), HOST_PY (the host's Python over SSH, default
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
if [ "${FANOUT:-0}" -gt 1 ]; then
    # The fan-out of issue #28 where each host has cores of its own (the test hosts of the development VM share its
    # two cores with the control plane): $FANOUT inventory hosts behind this one sshd, each with its own workdir
    # (so its own lock), the smem-probe kit on one of them and on all at once, in turn, $REPEATS times each.
    FINV=$WORK/fanout.yml
    GPUS=$(nvidia-smi -L | grep -c '^GPU ')  # each host pinned to GPU (i-1) mod GPUS: one each where there are enough
    bash tests/gpu/fanout_inventory.sh "$FANOUT" "$GPUS" "$WORK" "$SSH_PORT" "$HOST_PY" "${GPU_ARCH:-sm90}" > "$FINV" || exit 1
    cp "$FINV" "$OUT/fanout-inventory.yml"
    timed() {  # timed LABEL ARGS...: one repro; its exit code and wall seconds go to $OUT/fanout.log
        local label=$1; shift
        local t0 rc
        t0=$(date +%s.%N)
        invoke_ repro "$FANOUT_KIT" "$@" ${FANOUT_ARGS:-} --inventory "$FINV" --known-hosts "$KNOWN" --runs-dir "$WORK/fanruns" -q \
            >>"$OUT/fanout.log" 2>&1
        rc=$?
        echo "timed $label exit $rc wall $("$PY" -c "print(round($(date +%s.%N) - $t0, 3))")" >>"$OUT/fanout.log"
    }
    for FANOUT_KIT in ${FANOUT_KITS:-smem-probe}; do
    log "fan-out: $FANOUT_KIT ${FANOUT_ARGS:-} on 1 host and on $FANOUT hosts ($GPUS GPUs), in turn, ${REPEATS:-3} times (load $(cut -d' ' -f1-3 /proc/loadavg))"
    : > "$OUT/fanout.log"
    timed warm --host g1  # the code shipped and cached once
    for _ in $(seq 1 "${REPEATS:-3}"); do timed one --host g1; timed all --group fan; done
    "$PY" - "$OUT/fanout.log" "$FANOUT" <<'EOF' | tee -a "$OUT/summary.txt"
import statistics, sys
lines = [line.split() for line in open(sys.argv[1]) if line.startswith("timed ")]
walls = {label: [float(w[-1]) for w in lines if w[1] == label] for label in ("one", "all")}
codes = sorted({w[3] for w in lines})
one, every = statistics.median(walls["one"]), statistics.median(walls["all"])
print(f"== fan-out: {sys.argv[2]} hosts {every:.2f} s (runs {walls['all']}) vs 1 host {one:.2f} s"
      f" (runs {walls['one']}): {every / one:.2f}x; exit codes {codes}")
EOF
    cp "$OUT/fanout.log" "$OUT/fanout-$FANOUT_KIT.log"
    done
    log "load after the fan-out: $(cut -d' ' -f1-3 /proc/loadavg)"
    tar -czf "$OUT/fanout-records.tar.gz" -C "$WORK/fanruns" .
fi
log "known_hosts written by reprokit: $(cut -d' ' -f1,2 "$KNOWN")"
log "host cache: $(find "$WORK/host/cache" -type f -name '*.whl' | sed "s|$WORK/host|<workdir>|")"
log "total $(( $(date +%s) - started )) s"
kill "$(cat "$WORK/sshd.pid")" 2>/dev/null
exit 0
