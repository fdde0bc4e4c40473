#!/usr/bin/env bash
# One call on the 16-core GPU host, run from the root of the sent tree (the repository itself, PYTHONPATH=$PWD):
#   (a) tests/gpu/h200_over_ssh.sh: the kits over a real OpenSSH server on 127.0.0.1 (../shared H200-SSH recipe),
#   (b) the fit table's cells still missing (todo.json), a pool of workers, until the deadline.
# Everything it writes that matters goes under $OUT: facts.txt (machine, versions, seconds per phase),
# h200-ssh/ (the script's summary, logs, inventory, records.tar.gz, console.log), cells/ (cells.json, log.txt).
#
#   bash .devcarry-final/job.sh [DEADLINE_S]    # DEADLINE_S (default 270): seconds from the start for the whole job
#
# Carried in this folder (git-ignored): debs/ (Debian 12 OpenSSH and its libraries, `apt-get download`), whl/ (the
# control plane's wheels of requirements.lock for CPython 3.12, `pip download --require-hashes`),
# reprokit-cache/wheels/ (the FlashInfer wheel the kits stage onto the offline host), sources.tar.xz (the analysed
# sources of the 43 releases, `source_bundle pack`), todo.json (`python -m reprokit.commands.fit_table --missing`).
# Environment: SSH_BUDGET_S (default 200) caps (a); KITS and PROVISION go to the ssh script (default: smem-probe
# tile-sweep ep8-crash, then provision --check); SKIP_SSH=1 or SKIP_CELLS=1 leave a part out; WORKERS (3/4 of the
# cores: 12 of 16), NVCC_JOBS (2); FIT_CACHE (/tmp/fit-cache: the cells' cache and pool folder); CELLS_DURING_SSH=1
# starts (b) at nice 19 before (a) instead of after it, so the pool has the cores the kits leave idle for (a)'s ~150 s.
set -u
ROOT=$PWD
CARRY=$ROOT/.devcarry-final
: "${OUT:?OUT must name the folder that comes back}"
deadline_s=${1:-270}
started=$(date +%s)
left() { echo $(( deadline_s - ($(date +%s) - started) )); }
mark() { echo "$1 $(( $(date +%s) - started ))" >>"$OUT/facts.txt"; }
mkdir -p "$OUT/h200-ssh" "$OUT/cells"
{
    date -u +%FT%TZ; nproc; free -g | head -2; nvidia-smi -L 2>&1; nvcc --version 2>&1 | tail -2
    python3 --version; git -C "$ROOT" log -1 --format='tree HEAD %H %s' 2>&1 | cut -c1-160
} >"$OUT/facts.txt" 2>&1

# The control plane's packages, once, for both parts (the ssh script then finds them and installs nothing).
if ! python3 -c 'import fabric, pydantic, rich, invoke, yaml' 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        "$CARRY"/whl/*.whl >"$OUT/pip.txt" 2>&1 || echo "pip install of the carried wheels failed" >>"$OUT/facts.txt"
fi
export PYTHONPATH=$ROOT:/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
python3 -c 'import reprokit, fabric, pydantic; print("reprokit", reprokit.__file__)' >>"$OUT/facts.txt" 2>&1
mark pip_s

cells() {  # the fit cells: unpack the sources into a cache of their own, then the pool until the deadline
    export REPROKIT_CACHE=${FIT_CACHE:-/tmp/fit-cache}
    # once per cache: tarfile re-extracting over its own hard links scans the whole archive for each one (minutes)
    local digest; digest=$(sha256sum "$CARRY/sources.tar.xz" | cut -d' ' -f1)
    if [ "$(cat "$REPROKIT_CACHE/.bundle-unpacked" 2>/dev/null)" != "$digest" ]; then
        python3 -m reprokit.workloads.static_smem.source_bundle unpack "$CARRY/sources.tar.xz" >>"$OUT/cells/unpack.txt" 2>&1 \
            && echo "$digest" >"$REPROKIT_CACHE/.bundle-unpacked"
    fi
    mark unpack_done_s
    rm -rf "$REPROKIT_CACHE/cells"  # a warm machine's earlier pool: its tables would be counted again
    local budget=$(( $(left) - 15 ))  # 15 s to write cells.json and copy it out
    echo "cells budget_s $budget, todo $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$CARRY/todo.json")" >>"$OUT/facts.txt"
    if [ "$budget" -gt 20 ]; then
        python3 "$ROOT/evidence/fit-table-cells/cells.py" --todo "$CARRY/todo.json" --out-dir "$REPROKIT_CACHE/cells" \
            --workers "${WORKERS:-$(( $(nproc) * 3 / 4 ))}" --jobs "${NVCC_JOBS:-2}" --deadline-s "$budget" 2>"$OUT/cells/log.txt"
        cp "$REPROKIT_CACHE/cells/cells.json" "$OUT/cells/cells.json"
    fi
    mark cells_done_s
}

if [ "${SKIP_CELLS:-0}" != 1 ] && [ "${CELLS_DURING_SSH:-0}" = 1 ]; then
    ( renice -n 19 -p "$BASHPID" >/dev/null 2>&1; cells ) &  # niced before it starts anything: the kits come first
    cells_pid=$!
fi

# (a) its inputs where the script reads them (ignored paths of the tree: .cache/h200-ssh, .whl)
if [ "${SKIP_SSH:-0}" != 1 ]; then
    mkdir -p .cache/h200-ssh/debs .cache/h200-ssh/reprokit-cache/wheels .whl
    cp "$CARRY"/debs/*.deb .cache/h200-ssh/debs/
    cp "$CARRY"/reprokit-cache/wheels/*.whl .cache/h200-ssh/reprokit-cache/wheels/
    cp "$CARRY"/whl/*.whl .whl/
    ssh_budget=${SSH_BUDGET_S:-200}
    [ "$ssh_budget" -gt "$(left)" ] && ssh_budget=$(left)
    OUT=$OUT/h200-ssh PY=python3 timeout --kill-after=5 "$ssh_budget" bash tests/gpu/h200_over_ssh.sh \
        >"$OUT/h200-ssh/console.log" 2>&1
    echo "h200_over_ssh exit $? (budget $ssh_budget s)" >>"$OUT/facts.txt"
    mark ssh_done_s
fi

# (b) after (a), unless it already runs
if [ "${SKIP_CELLS:-0}" != 1 ]; then
    if [ -n "${cells_pid:-}" ]; then wait "$cells_pid"; else cells; fi
fi
mark total_s
uptime >>"$OUT/facts.txt"
