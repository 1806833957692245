/**
 * `npm run dapr:validate`: checks every Dapr file of the repository (components/, dapr/,
 * dapr.yaml, docker-compose*.yml) against the schema of its kind, then the conventions across
 * files, printing each file with OK or its problems (file:line YAML path: message). Exits 1 on
 * any problem. Needs no Docker and no Dapr.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkComponentScopes, loadDeploymentDocs } from "./check-component-scopes.ts";
import { checkDaprConventions } from "./check-dapr-conventions.ts";
import { loadDaprFiles } from "./load-dapr-files.ts";
import { formatProblem, validateDocuments, type DocumentReport } from "./validate-dapr-files.ts";

const root = resolve(import.meta.dirname, "..", "..");
const documents = await loadDaprFiles(root);
const reports = validateDocuments(documents);

const reportsByFile = new Map<string, DocumentReport[]>();
for (const report of reports)
  reportsByFile.set(report.document.file, [...(reportsByFile.get(report.document.file) ?? []), report]);

let problemCount = 0;
for (const [file, fileReports] of reportsByFile) {
  const kinds = [...new Set(fileReports.map((report) => report.kind ?? "unknown kind"))].join(", ");
  const problems = fileReports.flatMap((report) => report.problems);
  problemCount += problems.length;
  console.log(`${problems.length === 0 ? "OK  " : "FAIL"} ${file} (${kinds})`);
  for (const problem of problems) console.log(`       ${formatProblem(problem)}`);
}

const conventionProblems = [
  ...checkDaprConventions(documents, { pathExists: (path) => existsSync(join(root, path)) }),
  ...checkComponentScopes(documents, await loadDeploymentDocs(root)),
];
problemCount += conventionProblems.length;
console.log(
  `${conventionProblems.length === 0 ? "OK  " : "FAIL"} conventions (profiles, apps, ports, subscriptions, scopes)`,
);
for (const problem of conventionProblems) console.log(`       ${formatProblem(problem)}`);

if (problemCount > 0) {
  console.error(`${problemCount} problem(s) in the Dapr configuration`);
  process.exitCode = 1;
} else {
  console.log(`${reportsByFile.size} files valid`);
}
