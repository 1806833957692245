import { mkdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * What the outage drill runs: a runbook of one phase of `steps` steps over `members` members, every
 * step calling `Record-Step`, a custom function that appends `<member> <step>` to a side-effect
 * log. The log is the ground truth: a key missing is a lost step, a key twice a duplicated one.
 */
export interface OutageFixture {
  readonly runbookName: string;
  readonly runbookYaml: string;
  readonly membersCsv: string;
  readonly functionsDir: string;
  readonly csvDir: string;
  readonly sideEffectLog: string;
  readonly expectedKeys: readonly string[];
}

export function writeOutageFixture(dir: string, members: number, steps: number): OutageFixture {
  const functionsDir = path.join(dir, "functions");
  const csvDir = path.join(dir, "csv");
  mkdirSync(functionsDir, { recursive: true });
  mkdirSync(csvDir, { recursive: true });
  const sideEffectLog = path.join(dir, "side-effects.log");
  // No imports: the module lives outside the repository. appendFileSync of one short line is
  // atomic enough for a log read after the batch.
  writeFileSync(
    path.join(functionsDir, "record-step.mjs"),
    `import { appendFileSync } from "node:fs";
export default {
  "Record-Step": async (params) => {
    appendFileSync(${JSON.stringify(sideEffectLog)}, params.Member + " " + params.Step + "\\n");
    return { complete: true, data: {} };
  },
};
`,
  );
  const runbookName = "outage-drill";
  const stepNames = Array.from({ length: steps }, (_, i) => `step-${i + 1}`);
  const runbookYaml = [
    `name: ${runbookName}`,
    "description: Database outage drill.",
    "data_source:",
    "  type: csv",
    "  path: members.csv",
    "  primary_key: Upn",
    "  batch_time_column: MigrationDate",
    "retry:",
    "  max_retries: 3",
    "  interval: 2s",
    "phases:",
    "  - name: move",
    "    offset: T-0",
    "    steps:",
    ...stepNames.flatMap((step) => [
      `      - name: ${step}`,
      "        worker_id: worker-01",
      "        function: Record-Step",
      "        params:",
      '          Member: "{{Upn}}"',
      `          Step: ${step}`,
    ]),
    "",
  ].join("\n");
  const upns = Array.from(
    { length: members },
    (_, i) => `user${String(i + 1).padStart(4, "0")}@contoso.test`,
  );
  const membersCsv =
    ["Upn,MigrationDate", ...upns.map((upn) => `${upn},2030-01-01T09:00:00Z`)].join("\n") + "\n";
  writeFileSync(path.join(csvDir, "members.csv"), membersCsv);
  return {
    runbookName,
    runbookYaml,
    membersCsv,
    functionsDir,
    csvDir,
    sideEffectLog,
    expectedKeys: upns.flatMap((upn) => stepNames.map((step) => `${upn} ${step}`)),
  };
}

export interface SideEffectCount {
  readonly executed: number;
  readonly lost: number;
  readonly duplicated: number;
}

export function countSideEffects(fixture: OutageFixture): SideEffectCount {
  const lines = existsSync(fixture.sideEffectLog)
    ? readFileSync(fixture.sideEffectLog, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
  const seen = new Map<string, number>();
  for (const line of lines) seen.set(line, (seen.get(line) ?? 0) + 1);
  return {
    executed: lines.length,
    lost: fixture.expectedKeys.filter((key) => !seen.has(key)).length,
    duplicated: [...seen.values()].filter((count) => count > 1).length,
  };
}
