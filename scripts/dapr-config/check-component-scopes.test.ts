import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  appIdsRun,
  checkComponentScopes,
  loadDeploymentDocs,
  type DeploymentDoc,
} from "./check-component-scopes.ts";
import { loadDaprFiles, parseDaprYaml, type DaprDocument } from "./load-dapr-files.ts";
import { formatProblem } from "./validate-dapr-files.ts";

const root = resolve(import.meta.dirname, "..", "..");
let documents: DaprDocument[];
let docs: DeploymentDoc[];
beforeAll(async () => {
  documents = await loadDaprFiles(root);
  docs = await loadDeploymentDocs(root);
});

/** dapr.yaml with a second worker pool: its own app id (consumer group), worker id and ports. */
async function runTemplateWithSecondPool(): Promise<DaprDocument[]> {
  const text = await readFile(join(root, "dapr.yaml"), "utf8");
  const pool = `  - appID: matoolkit-worker-02
    appDirPath: ./
    appPort: 3005
    daprHTTPPort: 3505
    daprGRPCPort: 50005
    command: ["npx", "tsx", "services/worker/src/main.ts"]
    env:
      MATOOLKIT_DAPR_APP_PORT: "3005"
      MATOOLKIT_WORKER_ID: "worker-02"
`;
  return parseDaprYaml("dapr.yaml", `${text.trimEnd()}\n${pool}`);
}

describe("component scopes cover every app id that is run", () => {
  it("the repository's components are loaded by every app id of dapr.yaml, docker-compose.yml and the deployment docs", () => {
    const appIds = appIdsRun(documents, docs).map((source) => source.appId);
    expect(appIds).toEqual(
      expect.arrayContaining([
        "matoolkit-orchestrator",
        "matoolkit-worker",
        "matoolkit-scheduler",
        "matoolkit-admin-api",
        // deploy/README.md's second worker pool.
        "matoolkit-worker-02",
      ]),
    );
    expect(checkComponentScopes(documents, docs).map(formatProblem)).toEqual([]);
  });

  it("a second worker pool added to dapr.yaml gets the local profile's pub/sub and state store", async () => {
    const withPool = [
      ...documents.filter((document) => document.file !== "dapr.yaml"),
      ...(await runTemplateWithSecondPool()),
    ];
    expect(appIdsRun(withPool, []).map((source) => source.appId)).toContain("matoolkit-worker-02");
    const localProblems = checkComponentScopes(withPool, []).filter((problem) =>
      problem.file.startsWith("components/local/"),
    );
    expect(localProblems.map(formatProblem)).toEqual([]);
  });

  it("reports a scoped component that an app id run by the repository would not load, naming both", () => {
    const [component] = parseDaprYaml(
      "components/x/pubsub.yaml",
      `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: matoolkit-pubsub
spec:
  type: pubsub.redis
  version: v1
  metadata:
    - name: redisHost
      value: "localhost:6379"
scopes:
  - matoolkit-worker
`,
    );
    const doc = { file: "deploy/README.md", text: "run `matoolkit-worker` and `matoolkit-worker-blue`" };
    expect(checkComponentScopes([component!], [doc]).map(formatProblem)).toEqual([
      "components/x/pubsub.yaml:11 scopes: component matoolkit-pubsub is not loaded by app matoolkit-worker-blue (run by deploy/README.md): add it to scopes",
    ]);
  });
});
