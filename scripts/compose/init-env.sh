#!/bin/sh
# Writes the secrets Docker Compose needs into .env (git-ignored, mode 0600), once: the PostgreSQL
# password of the `postgres` container and the two Dapr tokens (DAPR_API_TOKEN: the app's key to
# its sidecar's API; APP_API_TOKEN: the sidecar's key to the app's callbacks). Every clone gets
# its own random values, so no password is shared between installations. Values already in .env
# are kept (a second run changes nothing; delete a line to rotate it, then `docker compose up`).
# POSIX sh and /dev/urandom only: it runs where Docker runs, with no Node.js.
# Usage: sh scripts/compose/init-env.sh [path/to/.env]
set -eu

env_file="${1:-.env}"
umask 077
[ -f "$env_file" ] || : >"$env_file"
chmod 600 "$env_file"

random_secret() {
  # 32 random bytes, URL-safe (no quoting in YAML, URLs or shells).
  head -c 32 /dev/urandom | base64 | tr -d '\n=' | tr '+/' '-_'
}

added=""
for name in MATOOLKIT_POSTGRES_PASSWORD MATOOLKIT_DAPR_API_TOKEN MATOOLKIT_APP_API_TOKEN; do
  if ! grep -q "^${name}=." "$env_file"; then
    printf '%s=%s\n' "$name" "$(random_secret)" >>"$env_file"
    added="$added $name"
  fi
done
if [ -n "$added" ]; then
  echo "compose: wrote$added to $env_file (mode 0600)" >&2
else
  echo "compose: $env_file already holds every secret; nothing changed" >&2
fi
