import { globSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/**
 * The "What ran where" matrix of components/README.md, read as data so a test can hold it to what
 * CI really runs (`npm run test:dapr`, i.e. vitest.dapr.config.ts's files): one row per profile
 * folder, saying whether the shared end-to-end suite passes on real daprd, and which test files
 * run it.
 */
export type SuiteClaim = "passes" | "not run" | "refused" | "reviewed only";

export interface MatrixRow {
  readonly profile: string;
  readonly suite: SuiteClaim;
  /** Repository paths of the test files the row links in its CI column. */
  readonly testFiles: readonly string[];
  readonly line: number;
}

const SUITE_CLAIMS: readonly SuiteClaim[] = ["passes", "not run", "refused", "reviewed only"];
const MATRIX_HEADING = "## What ran where";

/** Parses the matrix table under "## What ran where"; throws naming what is malformed. */
export function readBrokerMatrix(readmePath: string, root: string): MatrixRow[] {
  const lines = readFileSync(readmePath, "utf8").split("\n");
  const start = lines.indexOf(MATRIX_HEADING);
  if (start < 0) throw new Error(`${relative(root, readmePath)}: no "${MATRIX_HEADING}" section`);
  const tableStart = lines.findIndex((line, i) => i > start && line.startsWith("|"));
  const header = cells(lines[tableStart] ?? "");
  const column = (name: string) => {
    const index = header.findIndex((cell) => cell.toLowerCase().startsWith(name));
    if (index < 0) throw new Error(`${relative(root, readmePath)}: the matrix has no "${name}…" column`);
    return index;
  };
  const [profileColumn, suiteColumn, ciColumn] = [column("profile"), column("shared"), column("ci")];
  const rows: MatrixRow[] = [];
  for (let i = tableStart + 2; i < lines.length && lines[i]!.startsWith("|"); i++) {
    const row = cells(lines[i]!);
    const profile = /^`([a-z0-9-]+)`$/.exec(row[profileColumn] ?? "")?.[1];
    const suite = SUITE_CLAIMS.find((claim) => (row[suiteColumn] ?? "").toLowerCase().startsWith(claim));
    if (profile === undefined || suite === undefined)
      throw new Error(
        `${relative(root, readmePath)}:${i + 1}: a row needs a profile as \`name\` and a suite cell starting with ${SUITE_CLAIMS.join(" | ")}`,
      );
    const links = [...(row[ciColumn] ?? "").matchAll(/\]\(([^)]+)\)/g)].map((match) =>
      relative(root, resolve(join(readmePath, ".."), match[1]!)),
    );
    rows.push({ profile, suite, testFiles: links, line: i + 1 });
  }
  return rows;
}

/** The table's cells, without the outer pipes, trimmed. */
function cells(line: string): string[] {
  return line
    .replace(/^\|/, "")
    .replace(/\|\s*$/, "")
    .split("|")
    .map((cell) => cell.trim());
}

/** The profile folders under components/ (compose/ is `local` for Compose, not a profile). */
export function profileFolders(root: string): string[] {
  return readdirSync(join(root, "components"))
    .filter((name) => name !== "compose" && statSync(join(root, "components", name)).isDirectory())
    .sort();
}

/** The files `npm run test:dapr` runs: vitest.dapr.config.ts's include globs, expanded. */
export function daprSuiteFiles(root: string, include: readonly string[]): string[] {
  return [...new Set(include.flatMap((pattern) => globSync(pattern, { cwd: root })))].sort();
}

/**
 * The profile folders a real-Dapr test file loads as shipped: `realDaprProfile({ components: "x" })`
 * or `join(repoRoot, "components", "x")`; and whether it runs the shared end-to-end suite.
 */
export function profilesLoadedBy(source: string): { profiles: string[]; sharedSuite: boolean } {
  const profiles = new Set<string>();
  for (const match of source.matchAll(/components: "([a-z0-9-]+)"/g)) profiles.add(match[1]!);
  for (const match of source.matchAll(/"components", "([a-z0-9-]+)"/g)) profiles.add(match[1]!);
  return { profiles: [...profiles].sort(), sharedSuite: /\bmanualBatchScenarios\(profile\)/.test(source) };
}
