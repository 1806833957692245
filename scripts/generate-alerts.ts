/**
 * `npm run alerts:generate` writes the Helm chart's PrometheusRule template and the ACA Bicep's
 * Azure Monitor alert module from libs/domain/src/alerts/definitions.ts;
 * `npm run alerts:generate -- --check` (CI) exits 1 when a committed file differs from what the
 * definitions give.
 */
import { join } from "node:path";
import { alertDefinitions } from "@matoolkit/domain";
import { syncAlertRules } from "./alerts/sync-alert-rules.ts";

const check = process.argv.slice(2).includes("--check");
const stale = await syncAlertRules(join(import.meta.dirname, ".."), alertDefinitions, { check });
for (const path of stale)
  if (check) console.error(`${path} is stale: run npm run alerts:generate`);
  else console.log(`${path} updated`);
if (check && stale.length > 0) process.exitCode = 1;
else if (stale.length === 0) console.log("alert rules are up to date");
