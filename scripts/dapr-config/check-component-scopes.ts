/**
 * A component with `scopes` is loaded only by the sidecars whose app id is listed; any other
 * sidecar starts without it, and its app fails on its first publish or state call. Worker pools
 * each run under an app id of their own (one consumer group per pool), so every app id the
 * repository runs or tells people to run must be in the scopes of every scoped component:
 * the apps of dapr.yaml, the `--app-id` of every daprd in docker-compose.yml, and the app ids the
 * deployment docs name (backticked `matoolkit-<service>` or `matoolkit-<service>-<pool>`).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { componentSchema, composeSchema, multiAppRunSchema } from "./dapr-config-schemas.ts";
import { daprApps } from "./dapr-conventions.ts";
import { commandArguments, flagValue, isDaprdCommand, parseDaprdFlags } from "./daprd-command.ts";
import type { DaprDocument } from "./load-dapr-files.ts";
import { formatYamlPath, type Problem } from "./validate-dapr-files.ts";

/** A documentation file (Markdown) that names app ids to deploy. */
export interface DeploymentDoc {
  readonly file: string;
  readonly text: string;
}

/** The deployment docs whose app ids are checked, repository-relative. */
export const deploymentDocFiles = ["deploy/README.md"] as const;

export async function loadDeploymentDocs(root: string): Promise<DeploymentDoc[]> {
  return Promise.all(
    deploymentDocFiles.map(async (file) => ({ file, text: await readFile(join(root, file), "utf8") })),
  );
}

/** Where an app id comes from, for the message. */
interface AppIdSource {
  readonly appId: string;
  readonly from: string;
}

/** `matoolkit-worker`, `matoolkit-worker-02`: a service's app id, or it plus a pool suffix. */
const documentedAppId = new RegExp(
  `\`(${daprApps.map((app) => app.appId).join("|")})(-[a-z0-9]+(-[a-z0-9]+)*)?\``,
  "g",
);

export function appIdsRun(documents: readonly DaprDocument[], docs: readonly DeploymentDoc[]): AppIdSource[] {
  const sources: AppIdSource[] = [];
  for (const document of documents) {
    if (document.file === "dapr.yaml") {
      const parsed = multiAppRunSchema.safeParse(document.value);
      if (parsed.success)
        for (const app of parsed.data.apps) sources.push({ appId: app.appID, from: document.file });
    }
    if (document.file === "docker-compose.yml") {
      const parsed = composeSchema.safeParse(document.value);
      if (!parsed.success) continue;
      for (const service of Object.values(parsed.data.services)) {
        const argv = commandArguments(service.command);
        const appId = argv && isDaprdCommand(argv) ? flagValue(parseDaprdFlags(argv), "app-id") : undefined;
        if (appId !== undefined) sources.push({ appId, from: document.file });
      }
    }
  }
  for (const doc of docs) {
    for (const match of doc.text.matchAll(documentedAppId)) {
      sources.push({ appId: match[0].slice(1, -1), from: doc.file });
    }
  }
  // One entry per app id, naming the first file that runs it.
  return [...new Map(sources.reverse().map((source) => [source.appId, source])).values()].reverse();
}

export function checkComponentScopes(
  documents: readonly DaprDocument[],
  docs: readonly DeploymentDoc[],
): Problem[] {
  const appIds = appIdsRun(documents, docs);
  const problems: Problem[] = [];
  for (const document of documents) {
    const parsed = componentSchema.safeParse(document.value);
    if (!parsed.success || parsed.data.scopes === undefined) continue;
    const scopes = new Set(parsed.data.scopes);
    for (const { appId, from } of appIds) {
      if (scopes.has(appId)) continue;
      problems.push({
        file: document.file,
        line: document.lineOf(["scopes"]),
        path: formatYamlPath(["scopes"]),
        message: `component ${parsed.data.metadata.name} is not loaded by app ${appId} (run by ${from}): add it to scopes`,
      });
    }
  }
  return problems;
}
