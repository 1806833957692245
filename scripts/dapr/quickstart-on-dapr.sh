#!/usr/bin/env bash
# Runs README "Run with real Dapr, step by step" and then the Quickstart, verbatim, on real Dapr:
# the binaries npm run dapr:install built, `dapr init --slim`'s layout from npm run dapr:init, the
# dapr CLI's `dapr run -f`, then the Quickstart's matoolkit commands against the API on :8080.
# What differs from a user's run, and why: DAPR_RUNTIME_PATH is a temporary folder (a fresh
# Scheduler, so no job of an earlier run fires into this one), and DATABASE_URL names a new
# database (README step 2's documented change: the Quickstart expects batch 1). Redis is the
# machine's (localhost:6379, as components/local says), and matoolkit's keys and streams in it are
# deleted first: the Dapr state there (publish dedupe, idempotency keys, workflow state) belongs
# to an earlier run's database, whose ids (job:step-1, batch-1) the new one reuses, so its
# messages would be dropped as duplicates. Needs the ports dapr.yaml names free.
# Usage: bash scripts/dapr/quickstart-on-dapr.sh   (prints every command and its output)
set -euo pipefail
cd "$(dirname "$0")/../.."

export DAPR_RUNTIME_PATH="$(mktemp -d /tmp/matoolkit-dapr-runtime-XXXXXX)"
export PATH="$DAPR_RUNTIME_PATH/.dapr/bin:$PATH"
database="matoolkit_quickstart_$$"
server="${QUICKSTART_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}"
runfile=".dapr-quickstart.yaml"

cleanup() {
  set +e
  [ -f "$runfile" ] && dapr stop -f "$runfile" >/dev/null 2>&1
  npm run -s dapr:init -- --stop
  rm -f "$runfile"
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1
  rm -rf "$DAPR_RUNTIME_PATH"
}
trap cleanup EXIT

step() { echo; echo "\$ $*"; "$@"; }

echo "\$ redis-cli: delete matoolkit's Dapr state and topic streams from localhost:6379"
redis-cli --scan --pattern 'matoolkit-*||*' | xargs -r -n 500 redis-cli DEL >/dev/null
for topic in orchestrator-events worker-jobs worker-results notifications; do
  redis-cli DEL "$topic" "$topic-deadletter" >/dev/null
done

step npm run -s dapr:install -- --version newest
step npm run -s dapr:init
step dapr version
psql "$server/postgres" -qc "CREATE DATABASE $database" >/dev/null
sed "s#postgres://postgres@127.0.0.1:5432/postgres#$server/$database#" dapr.yaml > "$runfile"

echo; echo "\$ dapr run -f $runfile   (dapr.yaml with DATABASE_URL=$server/$database; output in .dapr/quickstart-run.log)"
mkdir -p .dapr
dapr run -f "$runfile" > .dapr/quickstart-run.log 2>&1 &
for _ in $(seq 1 180); do
  curl -fs http://127.0.0.1:8080/readyz >/dev/null 2>&1 && break
  sleep 1
done
step curl -fsS http://127.0.0.1:8080/readyz

# The Quickstart, verbatim; an advance refused because the previous step still runs is repeated.
advance() { until npx matoolkit batch advance 1; do sleep 1; done; }
step npx matoolkit runbook publish examples/contoso-pilot.yaml
step npx matoolkit batch create contoso-pilot examples/members-one-fails.csv
echo; echo '$ npx matoolkit batch advance 1   (x3, each repeated until the previous one finished)'
advance; advance; advance
for _ in $(seq 1 180); do
  status="$(npx matoolkit batch get 1 | sed -n 's/^Status: *//p')"
  [[ "$status" =~ ^(completed|failed|cancelled)$ ]] && break
  sleep 1
done
step npx matoolkit batch get 1
step npx matoolkit batch members 1
[ "$status" = completed ] || { echo "quickstart on Dapr: batch 1 ended $status, not completed" >&2; exit 1; }
echo; echo "quickstart on Dapr: batch 1 completed on real daprd"
