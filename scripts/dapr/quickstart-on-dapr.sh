#!/usr/bin/env bash
# Runs docs/dapr-mode.md "Run with real Dapr, step by step" and then the README Quickstart (the
# contoso-to-fabrikam rehearsal on the worker's simulated tenant; `tenant changes` read from the simulator) on real Dapr:
# the binaries npm run dapr:install built, `dapr init --slim`'s layout from npm run dapr:init, the
# dapr CLI's `dapr run -f`, then the Quickstart's matoolkit commands against the API on :8080.
# What differs from a user's run, and why: DAPR_RUNTIME_PATH is a temporary folder (a fresh
# Scheduler, so no job of an earlier run fires into this one), and DATABASE_URL names a new
# database (docs/dapr-mode.md step 2's documented change: the Quickstart expects batch 1). Redis is the
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

# Another server on :8080 (an `npm start` left running) would answer the readiness check and the
# Quickstart's commands in place of the Dapr apps: refuse rather than test the wrong system.
if curl -s -o /dev/null http://127.0.0.1:8080/ 2>/dev/null; then
  echo "quickstart-on-dapr: something already answers on 127.0.0.1:8080 (npm start?): stop it first" >&2
  rmdir "$DAPR_RUNTIME_PATH"
  exit 1
fi

cleanup() {
  set +e
  [ -f "$runfile" ] && dapr stop -f "$runfile" >/dev/null 2>&1
  # `dapr stop` must have stopped every sidecar and app; say so, and stop them, if it did not.
  for _ in $(seq 1 20); do pgrep -f "$DAPR_RUNTIME_PATH/.dapr/bin/daprd" >/dev/null || break; sleep 0.5; done
  if pgrep -f "$DAPR_RUNTIME_PATH/.dapr/bin/daprd" >/dev/null; then
    echo "quickstart on Dapr: dapr stop -f left sidecars running; stopping them" >&2
    pkill -f "$DAPR_RUNTIME_PATH/.dapr/bin/daprd"
    pkill -f "tsx services/(orchestrator|worker|scheduler|admin-api)/src/main.ts"
    left_running=1
  fi
  npm run -s dapr:init -- --stop
  rm -f "$runfile"
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1
  rm -rf "$DAPR_RUNTIME_PATH"
  exit "${left_running:-$1}"
}
trap 'cleanup $?' EXIT

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
# What another host sees: the sidecars' API only on loopback (dapr.yaml apiListenAddresses).
echo; echo "\$ ss -ltn: the sidecars' HTTP ports 3501-3504"
ss -ltnH '( sport >= :3501 and sport <= :3504 )' | awk '{print $4}' | sort
if ss -ltnH '( sport >= :3501 and sport <= :3504 )' | awk '{print $4}' | grep -qv '^127\.0\.0\.1:'; then
  echo "quickstart on Dapr: a sidecar API listens beyond loopback" >&2; exit 1
fi

# The Quickstart, verbatim; an advance refused because the previous step still runs is repeated.
advance() { until npx matoolkit batch advance 1; do sleep 1; done; }
step npx matoolkit runbook publish examples/contoso-to-fabrikam.yaml
step npx matoolkit batch create contoso-to-fabrikam examples/contoso-to-fabrikam.csv
echo; echo '$ npx matoolkit batch advance 1   (x3, each repeated until the previous one finished)'
advance; advance; advance
for _ in $(seq 1 180); do
  status="$(npx matoolkit batch get 1 | sed -n 's/^Status: *//p')"
  [[ "$status" =~ ^(completed|failed|cancelled)$ ]] && break
  sleep 1
done
step npx matoolkit batch get 1
step npx matoolkit batch members 1
step npx matoolkit batch steps 1
# The Quickstart's last command, `tenant changes`, reads the change log in the worker's process
# (all-in-one only; docs/dapr-mode.md): on Dapr, the simulator's own log instead.
simulator="$(grep -ho 'worker target: simulated tenant [^ ]* at http://127.0.0.1:[0-9]*' .dapr/logs/matoolkit-worker_app_*.log 2>/dev/null | tail -1 | sed 's/.* at //')"
[ -n "$simulator" ] && { echo; echo "\$ curl -s $simulator/_simulator/changes   (tenant changes, read from the simulator)"; curl -s "$simulator/_simulator/changes" | head -c 1500; echo; }
[ "$status" = completed ] || { echo "quickstart on Dapr: batch 1 ended $status, not completed" >&2; exit 1; }
echo; echo "quickstart on Dapr: batch 1 completed on real daprd"
