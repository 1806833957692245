// The pre-flight check run in the worker's own environment, for deployments where the admin API
// runs no worker (separate processes, Dapr): `npm run -s tenant:check -- [--runbook-file x.yaml]
// [--json]`. It reads the same MATOOLKIT_TENANT* variables as the worker (tenant-config.ts), so it
// meets the tenant with the worker's credential; exit 1 when a line failed.
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { parseRunbookOrThrow, tenantCheckSteps, type TenantCheckRequest } from "@matoolkit/domain";
import { createLogger } from "@matoolkit/runtime";
import { createTenantClients } from "./tenant/create-tenant-clients.ts";
import { tenantCheckerFor } from "./tenant/tenant-checker.ts";
import { tenantConfigFromEnv } from "./tenant/tenant-config.ts";
import { formatTenantCheckReport } from "./tenant/tenant-check-text.ts";

const usage = `Usage: npm run -s tenant:check -- [--runbook-file runbook.yaml] [--json]
  --runbook-file  check what this runbook needs (default: every standard function)
  --json          print the report as JSON`;

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    "runbook-file": { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help === true) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

const request: TenantCheckRequest = {};
const file = values["runbook-file"];
if (file !== undefined) {
  const definition = parseRunbookOrThrow(await readFile(file, "utf8"));
  // A file has no published version: 1 stands for "this file".
  request.runbook = { name: definition.name, version: 1, steps: tenantCheckSteps(definition) };
}

const config = tenantConfigFromEnv(process.env);
const logger = createLogger({ level: "warn", name: "tenant-check" });
const tenant = await createTenantClients(config, { logger });
try {
  const report = await tenantCheckerFor(
    config,
    tenant.clients,
    tenant.description,
  )(request, AbortSignal.timeout(60_000));
  process.stdout.write(
    values.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatTenantCheckReport(report),
  );
  process.exitCode = report.passed ? 0 : 1;
} finally {
  await tenant.close();
}
