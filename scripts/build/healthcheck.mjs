// The image's HEALTHCHECK: `node /app/dist/healthcheck.mjs [command]` (plain JavaScript: the image
// has no TypeScript runner; the build copies it next to the bundle). Exit 0 healthy, 1 not.
// It probes GET /healthz (liveness: the process serves HTTP) of the service this container runs:
//   all-in-one, admin-api            http://<MATOOLKIT_API_HOST or 127.0.0.1>:${PORT:-8080}/healthz
//   orchestrator, scheduler, worker  on Dapr (MATOOLKIT_RUNTIME dapr/aca or a Dapr adapter):
//                                    the Dapr app port ${MATOOLKIT_DAPR_APP_PORT:-3000};
//                                    else MATOOLKIT_METRICS_PORT when set;
//                                    else nothing listens: healthy while the process runs
//   migrate, token                   one-shot commands: nothing to probe
// The command comes from the argument, else MATOOLKIT_SERVICE, else the container's own command
// line (PID 1 is tini running `node /app/dist/matoolkit.mjs <command>`), else all-in-one, the same
// order the entry uses, so a container started with args: ["worker"] is probed as a worker.
import { readFileSync } from "node:fs";
import { request } from "node:http";
import process from "node:process";

const TIMEOUT_MS = 4000;

function commandOfPid1() {
  try {
    const argv = readFileSync("/proc/1/cmdline", "utf8").split("\0");
    const script = argv.findIndex((arg) => arg.endsWith("matoolkit.mjs"));
    const next = script < 0 ? undefined : argv[script + 1];
    return next && !next.startsWith("-") ? next : undefined;
  } catch {
    return undefined; // not Linux, or /proc hidden: fall back to the default
  }
}

/** A wildcard bind address is reachable on loopback; a specific one only on itself. */
function probeHost(bound) {
  const host = bound?.trim();
  return !host || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
}

function usesDapr(env) {
  const runtime = env.MATOOLKIT_RUNTIME?.trim();
  if (runtime === "dapr" || runtime === "aca") return true;
  return ["MATOOLKIT_BUS", "MATOOLKIT_TIMERS", "MATOOLKIT_IDEMPOTENCY", "MATOOLKIT_WORKFLOW"].some(
    (name) => (env[name]?.trim() || "embedded") !== "embedded",
  );
}

/** What to probe for a command: a URL, "none" (nothing listens by design) or "unknown". */
export function healthTarget(command, env) {
  switch (command) {
    case "all-in-one":
    case "admin-api":
      return `http://${probeHost(env.MATOOLKIT_API_HOST)}:${env.PORT?.trim() || "8080"}/healthz`;
    case "orchestrator":
    case "scheduler":
    case "worker":
      if (usesDapr(env)) {
        const port = env.MATOOLKIT_DAPR_APP_PORT?.trim() || "3000";
        return `http://${probeHost(env.MATOOLKIT_DAPR_APP_HOST)}:${port}/healthz`;
      }
      if (env.MATOOLKIT_METRICS_PORT?.trim()) {
        return `http://127.0.0.1:${env.MATOOLKIT_METRICS_PORT.trim()}/healthz`;
      }
      return "none";
    case "migrate":
    case "token":
      return "none";
    default:
      return "unknown";
  }
}

function probe(url) {
  return new Promise((resolve) => {
    const req = request(url, { method: "GET", timeout: TIMEOUT_MS }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? undefined : `HTTP ${res.statusCode}`);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on("error", (error) => resolve(error.message));
    req.end();
  });
}

async function main() {
  const command =
    process.argv[2]?.trim() || process.env.MATOOLKIT_SERVICE?.trim() || commandOfPid1() || "all-in-one";
  const target = healthTarget(command, process.env);
  if (target === "unknown") {
    process.stderr.write(`healthcheck: unknown command "${command}"\n`);
    return 1;
  }
  if (target === "none") return 0;
  const problem = await probe(target);
  if (problem === undefined) return 0;
  process.stderr.write(`healthcheck: ${command}: ${target}: ${problem}\n`);
  return 1;
}

if (import.meta.filename === process.argv[1]) process.exitCode = await main();
