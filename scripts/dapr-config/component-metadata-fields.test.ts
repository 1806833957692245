import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadComponentMetadataFields, unknownMetadataFieldProblems } from "./component-metadata-fields.ts";
import { loadDaprFiles, parseDaprYaml } from "./load-dapr-files.ts";
import { formatProblem, validateDocument } from "./validate-dapr-files.ts";

const root = resolve(import.meta.dirname, "..", "..");

/** Formatted problems of YAML text pretending to be `file`, as `npm run dapr:validate` prints them. */
function problemsOf(file: string, text: string): string[] {
  return parseDaprYaml(file, text).flatMap((document) =>
    validateDocument(document).problems.map(formatProblem),
  );
}

const postgresStateStore = (fields: Record<string, string>) => `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: matoolkit-state
spec:
  type: state.postgresql
  version: v2
  metadata:
    - name: connectionString
      value: "host=127.0.0.1 user=postgres port=5432 database=postgres"
${Object.entries(fields)
  .map(([name, value]) => `    - name: ${name}\n      value: "${value}"`)
  .join("\n")}
`;

describe("component metadata field names (components-contrib metadata.yaml)", () => {
  it("every component file of the repository uses only fields its type and version reads", async () => {
    const components = (await loadDaprFiles(root)).filter((document) =>
      document.file.startsWith("components/"),
    );
    expect(components.length).toBeGreaterThan(0);
    expect(
      components.flatMap((document) => unknownMetadataFieldProblems(document).map(formatProblem)),
    ).toEqual([]);
  });

  it("rejects tableName on PostgreSQL v2 (it reads tablePrefix), naming the file, component and field", () => {
    expect(
      problemsOf("components/x/statestore.yaml", postgresStateStore({ tableName: "dapr_state" })),
    ).toEqual([
      'components/x/statestore.yaml:11 spec.metadata[1].name: component matoolkit-state (state.postgresql v2) has no metadata field "tableName": daprd would ignore it (fields: scripts/dapr-config/component-metadata-fields.json)',
    ]);
    expect(
      problemsOf(
        "components/x/statestore.yaml",
        postgresStateStore({
          tablePrefix: "dapr_",
          metadataTableName: "dapr_metadata",
          actorStateStore: "true",
        }),
      ),
    ).toEqual([]);
  });

  it("accepts the fields daprd itself reads on every component of a kind, and those of built-in auth profiles", () => {
    const fields = loadComponentMetadataFields().components;
    expect(fields["state.postgresql@v2"]).toEqual(
      expect.arrayContaining(["actorStateStore", "keyPrefix", "useAzureAD", "azureClientId", "tablePrefix"]),
    );
    expect(fields["state.postgresql@v2"]).not.toContain("tableName");
    expect(fields["pubsub.redis@v1"]).toEqual(expect.arrayContaining(["consumerID", "redisHost"]));
  });

  it("fails a component type or version that has no field list, rather than letting it through", () => {
    const text = postgresStateStore({}).replace("version: v2", "version: v1");
    expect(problemsOf("components/x/statestore.yaml", text)).toEqual([
      expect.stringContaining(
        "spec.type: component matoolkit-state (state.postgresql v1): no field list for this type and version",
      ),
    ]);
  });
});
