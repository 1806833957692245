// Entry point: `npm run simulator -- --seed examples/fabrikam-tenant.json --port 8090`. A simulated
// tenant on its own, for a worker started elsewhere (MATOOLKIT_TENANT=simulated with
// MATOOLKIT_SIMULATED_TENANT_URL) or to try Graph / InvokeCommand calls by hand.
import { parseArgs } from "node:util";
import { parseSimulatorProfile } from "./behaviours.ts";
import { loadTenantSeed } from "./seed.ts";
import { startSimulatedTenant } from "./simulated-tenant.ts";

const usage = `Usage: npm run simulator -- [--seed FILE.json|FILE.csv] [--port N] [--host H]
       [--replication-delay-ms N] [--throttle-rate 0..1] [--retry-after-seconds N]
       [--profile default|chaos] [--random-seed N]`;

function numberOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < min || parsed > max) {
    throw new Error(`--${name} must be a number between ${min} and ${max}\n${usage}`);
  }
  return parsed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      "replication-delay-ms": { type: "string" },
      "throttle-rate": { type: "string" },
      "retry-after-seconds": { type: "string" },
      profile: { type: "string" },
      "random-seed": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  let profile;
  try {
    profile = values.profile === undefined ? undefined : parseSimulatorProfile(values.profile);
  } catch (error) {
    throw new Error(`--${(error as Error).message}\n${usage}`);
  }
  const throttleRate = numberOption("throttle-rate", values["throttle-rate"], 0, 1);
  const tenant = await startSimulatedTenant({
    ...(profile === undefined ? {} : { profile }),
    ...(values["random-seed"] === undefined
      ? {}
      : { randomSeed: numberOption("random-seed", values["random-seed"], 0, 2 ** 32 - 1)! }),
    host: values.host,
    port: numberOption("port", values.port, 0, 65535) ?? 8090,
    seed: values.seed === undefined ? undefined : await loadTenantSeed(values.seed),
    replicationDelayMs: numberOption("replication-delay-ms", values["replication-delay-ms"], 0, 600_000),
    ...(throttleRate === undefined
      ? {}
      : {
          throttle: {
            rate: throttleRate,
            retryAfterSeconds:
              numberOption("retry-after-seconds", values["retry-after-seconds"], 0, 3600) ?? 1,
          },
        }),
  });
  console.log(`simulated tenant ${tenant.tenantId} listening on ${tenant.url}`);
  if (!isLoopback(new URL(tenant.url).hostname)) {
    console.warn(
      "warning: the simulated tenant is for development: it accepts any token and /_simulator changes its state. " +
        "Listening beyond loopback lets anyone who reaches this address do so.",
    );
  }
  console.log(`  Graph:    ${tenant.url}/v1.0  (and /beta)`);
  console.log(`  Exchange: ${tenant.url}/adminapi/beta/${tenant.tenantId}/InvokeCommand`);
  console.log(`  What changed: ${tenant.url}/_simulator/changes   state: ${tenant.url}/_simulator/state`);
  const stop = () => {
    void tenant.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\./u.test(hostname);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
