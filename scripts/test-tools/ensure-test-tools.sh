#!/usr/bin/env bash
# Installs the system packages the test suite drives, when they are missing (run by `npm test`'s
# pretest hook, so a fresh clone needs nothing else): Debian's Chromium for the dashboard's browser
# tests, and Go with Sprig and the YAML libraries for the Helm chart renderer
# (deploy/helm/render: Helm's own template engine, since no helm binary can be installed here).
# Each package comes from Debian's archive; nothing is downloaded from elsewhere.
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v go >/dev/null 2>&1 || missing+=(golang-go)
for pkg in golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev golang-gopkg-yaml.v3-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
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
