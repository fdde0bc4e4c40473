#!/usr/bin/env bash
# The fit table's missing cells on the 16-core GPU host: no package index there, so the wheels' analysed sources
# travel as one bundle (reprokit.workloads.static_smem.source_bundle). Run from the carried directory:
#   bash job.sh CARRY_DIR OUT_DIR DEADLINE_S
set -u
carry=$(cd "$1" && pwd); out=$2; deadline_s=$3
# From the carried directory: `python -m` puts the working directory first on sys.path, and the checkout's root
# holds another reprokit (the first call of this job ran from there, imported it, and had no source bundle).
cd "$carry" || exit 2
python=/opt/torch/.venv/bin/python3
export PYTHONPATH=$carry/src:$carry/site REPROKIT_CACHE=/tmp/reprokit-cache PYTHONUNBUFFERED=1
{
  date -u +%FT%TZ; nproc; free -g | head -2; nvcc --version | tail -2; $python --version
  $python -c 'import reprokit, packaging; print(reprokit.__file__, packaging.__version__)'
} >"$out/facts.txt" 2>&1
started=$(date +%s)
$python -m reprokit.workloads.static_smem.source_bundle unpack "$carry/sources.tar.xz" >>"$out/facts.txt" 2>&1
echo "unpack_s $(( $(date +%s) - started ))" >>"$out/facts.txt"
$python "$carry/cells.py" --todo "$carry/todo.json" --out-dir /tmp/cells --workers 12 --jobs 2 \
  --deadline-s "$deadline_s" 2>"$out/log.txt"
cp /tmp/cells/cells.json "$out/cells.json"
echo "total_s $(( $(date +%s) - started ))" >>"$out/facts.txt"
uptime >>"$out/facts.txt"
