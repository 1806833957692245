#!/usr/bin/env bash
# Installs the system packages the test suite drives, when they are missing (run by `npm test`'s
# pretest hook, so a fresh clone needs nothing else): Debian's Chromium for the dashboard's browser
# tests, and Go, which builds the real helm for the Helm chart's tests (the hook's next step,
# scripts/helm/install.ts, through the Go module proxy). Each package comes from Debian's archive.
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || missing+=(golang-go)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "test tools: installing ${missing[*]} from Debian's packages" >&2
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
elif command -v sudo >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "test tools: cannot install ${missing[*]}: install them with your package manager (Debian: apt-get install ${missing[*]})" >&2
  exit 1
fi
