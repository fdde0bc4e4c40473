#!/usr/bin/env bash
# Command-line tools some tests drive, from Debian: tmux (the terminal tests read the screens at 80 and 120
# columns) and shellcheck (the step wrappers and the Slurm job script are held to it). Nothing is started.
# When they cannot be installed the reason goes to .cache/services/tools.unavailable and those tests skip.
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services
UNAVAILABLE=$STATE/tools.unavailable
mkdir -p "$STATE"
rm -f "$UNAVAILABLE"
unavailable() { echo "$1" > "$UNAVAILABLE"; echo "tools unavailable: $1"; exit 0; }

missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v shellcheck >/dev/null || missing+=(shellcheck)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || unavailable "${missing[*]} not installed, and installing needs root (apt-get install ${missing[*]})"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    || unavailable "cannot install ${missing[*]} with apt-get"
fi
echo "tools ready: $(tmux -V), shellcheck $(shellcheck --version | sed -n 's/^version: //p')"
