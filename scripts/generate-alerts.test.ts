import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alertDefinitions, type AlertDefinition } from "@matoolkit/domain";
import { azureAlertsPath, prometheusRulePath } from "./alerts/alert-rules.ts";
import { alertRuleFiles, syncAlertRules } from "./alerts/sync-alert-rules.ts";

/** `npm run alerts:generate [-- --check]`: the Helm and Bicep alert rules never drift from the definitions. */
const root = join(import.meta.dirname, "..");
const scratch = await mkdtemp(join(tmpdir(), "matoolkit-alert-rules-"));

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("the committed alert rules", () => {
  it("are exactly what the definitions give (run `npm run alerts:generate` if not)", async () => {
    expect(await syncAlertRules(root, alertDefinitions, { check: true })).toEqual([]);
  });

  it("`--check` exits 0 on them", () => {
    const result = spawnSync(
      process.execPath,
      ["--import", "tsx", join(root, "scripts/generate-alerts.ts"), "--check"],
      {
        encoding: "utf8",
      },
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("alert rules are up to date");
    expect(result.status).toBe(0);
  });
});

describe("syncAlertRules", () => {
  const changed: AlertDefinition[] = alertDefinitions.map((definition) =>
    definition.id === "dead-letters" ? { ...definition, severity: "warning" } : definition,
  );

  it("with check: lists a stale file and writes nothing", async () => {
    await syncAlertRules(scratch, alertDefinitions, { check: false });
    const before = await readFile(join(scratch, prometheusRulePath), "utf8");
    expect(await syncAlertRules(scratch, changed, { check: true })).toEqual([
      prometheusRulePath,
      azureAlertsPath,
    ]);
    expect(await readFile(join(scratch, prometheusRulePath), "utf8")).toBe(before);
  });

  it("without check: rewrites it, after which the check passes", async () => {
    await writeFile(join(scratch, azureAlertsPath), "// edited by hand\n");
    expect(await syncAlertRules(scratch, changed, { check: false })).toEqual([
      prometheusRulePath,
      azureAlertsPath,
    ]);
    expect(await syncAlertRules(scratch, changed, { check: true })).toEqual([]);
    const [rule] = alertRuleFiles(changed);
    expect(rule!.text).toContain("severity: warning\n            matoolkit_condition: dead-letters");
  });

  it("gives each condition one Prometheus rule, and an Azure rule unless it says why not", () => {
    const [prometheus, azure] = alertRuleFiles(alertDefinitions);
    for (const definition of alertDefinitions) {
      expect(prometheus!.text).toContain(`matoolkit_condition: ${definition.id}\n`);
      if (definition.azure === null) {
        expect(definition.whyNotAzure).toBeTruthy();
        expect(azure!.text).toContain(`// Not here: ${definition.id} (`);
      } else expect(azure!.text).toContain(`name: '\${name}-${definition.id}'`);
      if (definition.inProcess === null) expect(definition.whyNotInProcess).toBeTruthy();
    }
  });
});
