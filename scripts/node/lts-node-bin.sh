#!/usr/bin/env bash
# Prints the directory of a Node.js of the project's LTS line (24, as the image's node:24 base), to
# put first on PATH: `export PATH="$(bash scripts/node/lts-node-bin.sh):$PATH"` (what .ci/run does).
# The machine's own node when it is already of that line; otherwise the official Node binary that
# the npm registry ships as the package node-<os>-<arch> (the same binary as nodejs.org's), fetched
# once with npm into ~/.cache/matoolkit/node/v<version> (MATOOLKIT_NODE_CACHE to move it). Why: the
# machines this project runs on have Debian's Node 20, which is past its end of life, while its
# Azure and Dapr libraries need Node >= 22; tests, CI and production must run one major.
set -euo pipefail

version="${MATOOLKIT_NODE_VERSION:-24.21.0}"
major="${version%%.*}"
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "lts-node-bin: no Node $version package for $(uname -s); install Node $major yourself" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "lts-node-bin: no Node $version package for $(uname -m); install Node $major yourself" >&2; exit 1 ;;
esac

cache="${MATOOLKIT_NODE_CACHE:-$HOME/.cache/matoolkit/node}/v$version"
bin="$cache/node_modules/node-$os-$arch/bin"
if [ ! -x "$bin/node" ]; then
  echo "lts-node-bin: fetching Node $version (npm package node-$os-$arch) into $cache" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
    "node-$os-$arch@$version" >&2
fi
"$bin/node" --version >/dev/null || { echo "lts-node-bin: $bin/node does not run" >&2; exit 1; }
echo "$bin"
