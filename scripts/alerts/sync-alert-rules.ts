import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AlertDefinition } from "@matoolkit/domain";
import {
  azureAlertsBicep,
  azureAlertsPath,
  prometheusRulePath,
  prometheusRuleTemplate,
} from "./alert-rules.ts";

/** The generated files under `root`: what each must hold for these definitions. */
export function alertRuleFiles(definitions: readonly AlertDefinition[]): { path: string; text: string }[] {
  return [
    { path: prometheusRulePath, text: prometheusRuleTemplate(definitions) },
    { path: azureAlertsPath, text: azureAlertsBicep(definitions) },
  ];
}

/**
 * Writes the files that differ (or, with `check`, only lists them). Returns the paths that were
 * stale: empty means every file already matched the definitions.
 */
export async function syncAlertRules(
  root: string,
  definitions: readonly AlertDefinition[],
  options: { readonly check: boolean },
): Promise<string[]> {
  const stale: string[] = [];
  for (const file of alertRuleFiles(definitions)) {
    const target = join(root, file.path);
    const current = await readFile(target, "utf8").catch(() => undefined);
    if (current === file.text) continue;
    stale.push(file.path);
    if (options.check) continue;
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.text);
  }
  return stale;
}
