#!/usr/bin/env bash
# Chromium from Debian, for the report tests: they render report.html headless and check that it
# makes no request other than its own file:// page. Nothing is started; the tests launch it per test.
# When it cannot be installed the reason goes to .cache/services/chromium.unavailable and those tests skip.
set -euo pipefail
cd "$(dirname "$0")/../../.."
STATE=$PWD/.cache/services
UNAVAILABLE=$STATE/chromium.unavailable
mkdir -p "$STATE"
rm -f "$UNAVAILABLE"
unavailable() { echo "$1" > "$UNAVAILABLE"; echo "chromium unavailable: $1"; exit 0; }

if ! command -v chromium >/dev/null; then
  [ "$(id -u)" = 0 ] || unavailable "chromium is not installed and installing it needs root (apt-get install chromium)"
  # fonts-dejavu-core: the screenshots need one real font; Debian's chromium does not pull one in.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core \
    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core; } \
    || unavailable "cannot install chromium with apt-get"
fi
version=$(chromium --version 2>/dev/null) || unavailable "chromium is installed but \`chromium --version\` fails"
echo "chromium ready: $version"
