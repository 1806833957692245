import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { issueLocalToken } from "@matoolkit/admin-api";

/**
 * The work of the Dapr drills, counted as crash.drill.ts counts it: every step runs
 * `Drill-Record`, which sleeps `Seconds` (so a kill or an outage lands mid-step) and appends
 * `step-<step execution id> <job id>` to a side-effect log. It is not declared safe to repeat,
 * so a job whose worker died mid-job is reported `worker.lost` and retried under a new job id.
 */
const drillFunction = `import { appendFileSync } from "node:fs";
export default {
  "Drill-Record": async (params, context) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, Number(params.Seconds) * 1000);
      context.signal.addEventListener("abort", () => { clearTimeout(timer); reject(context.signal.reason); }, { once: true });
    });
    appendFileSync(process.env.DRILL_EFFECT_LOG, \`\${context.isInitStep ? "init" : "step"}-\${context.stepExecutionId} \${context.jobId}\\n\`);
    return { complete: true, data: { recorded: true } };
  },
};
`;

export const STEPS_PER_MEMBER = 3;

export interface DrillPhase {
  readonly name: string;
  /** Runbook offset before the batch start, e.g. T-0, T-1d. */
  readonly offset: string;
  readonly steps: number;
}

/**
 * Drill-Record steps in each phase (default one phase of three); the runbook's retry policy takes
 * worker.lost jobs again. Manual batches: members.csv with `batch_time: immediate` (empty: the
 * drill posts the members). Automated: `csv` with a StartsAt column that holds the batch's start,
 * since the scheduler's sync removes members of an automated batch its data source lacks.
 */
export function drillRunbook(
  name: string,
  stepSeconds: number,
  options: { readonly phases?: readonly DrillPhase[]; readonly automatedCsv?: string } = {},
): string {
  const phases = options.phases ?? [{ name: "migrate", offset: "T-0", steps: STEPS_PER_MEMBER }];
  const step = (index: number) =>
    [
      `      - name: record-${index}`,
      "        worker_id: worker-01",
      "        function: Drill-Record",
      "        params:",
      `          Seconds: "${stepSeconds}"`,
      '          Member: "{{Upn}}"',
    ].join("\n");
  const phase = (p: DrillPhase) =>
    [
      `  - name: ${p.name}`,
      `    offset: ${p.offset}`,
      "    steps:",
      ...Array.from({ length: p.steps }, (_, i) => step(i + 1)),
    ].join("\n");
  return `name: ${name}
data_source:
  type: csv
  path: ${options.automatedCsv ?? "members.csv"}
  primary_key: Upn
  ${options.automatedCsv === undefined ? "batch_time: immediate" : "batch_time_column: StartsAt"}
retry:
  max_retries: 3
  interval: 1s
phases:
${phases.map(phase).join("\n")}
`;
}

export interface DrillWork {
  readonly functionsDir: string;
  readonly csvDir: string;
  readonly effectLog: string;
  /** Lines of the side-effect log so far (a cheap progress gauge for "kill mid-phase"). */
  effects(): string[];
}

export function writeDrillWork(dir: string): DrillWork {
  const functionsDir = path.join(dir, "functions");
  const csvDir = path.join(dir, "csv");
  for (const folder of [functionsDir, csvDir]) mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(functionsDir, "drill.mjs"), drillFunction);
  writeFileSync(path.join(csvDir, "members.csv"), "Upn\n");
  const effectLog = path.join(dir, "effects.log");
  writeFileSync(effectLog, "");
  return {
    functionsDir,
    csvDir,
    effectLog,
    effects: () =>
      existsSync(effectLog)
        ? readFileSync(effectLog, "utf8")
            .split("\n")
            .filter((line) => line !== "")
        : [],
  };
}

export type DrillApi = (
  method: string,
  route: string,
  body?: string,
  type?: string,
) => Promise<Record<string, unknown>>;

/** The admin API of the app, as an Admin; `apiUrl()` is read per call (the app may restart). */
export async function drillApi(apiUrl: () => string, dataDir: string): Promise<DrillApi> {
  const token = await issueLocalToken({
    dataDir,
    issuer: "matoolkit-local",
    audience: "api://matoolkit",
    roles: ["Admin"],
    name: "dapr-drill@example.test",
    ttlSeconds: 3 * 3600,
  });
  return async (method, route, body, type) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (type !== undefined) headers["content-type"] = type;
    const response = await fetch(`${apiUrl()}/api${route}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (response.status >= 400)
      throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
}

/** A manual batch of `members` members, advanced until its phase is dispatched. */
export async function startManualBatch(
  api: DrillApi,
  runbook: string,
  members: number,
  label: string,
): Promise<number> {
  const csv = `Upn\n${Array.from({ length: members }, (_, i) => `${label}m${i}@contoso.test`).join("\n")}\n`;
  const batchId = Number((await api("POST", `/batches?runbook=${runbook}`, csv, "text/csv")).id);
  for (let advance = 0; advance < 20; advance++) {
    if ((await api("POST", `/batches/${batchId}/advance`)).action === "phase") return batchId;
    await sleep(500);
  }
  throw new Error(`batch ${batchId}: its phase was not dispatched`);
}

/** Polls until the batch ends or `deadline` (epoch ms); API errors (app restarting) are retried. */
export async function waitForBatchEnd(api: DrillApi, batchId: number, deadline: number): Promise<string> {
  let status = "unknown";
  while (Date.now() < deadline) {
    status = String((await api("GET", `/batches/${batchId}`).catch(() => ({ status })))!.status);
    if (status === "completed" || status === "failed") break;
    await sleep(500);
  }
  return status;
}

export interface BatchTally {
  readonly expected: number;
  readonly succeeded: number;
  /** Still pending, dispatched, polling or in retry at the end, or not created yet. */
  readonly open: number;
  /** Steps that ended other than succeeded, or succeeded with no side effect recorded. */
  readonly lost: number;
  /** Job ids whose function ran twice: never allowed. */
  readonly duplicated: number;
  /** Steps whose function ran under two job ids: a worker.lost retry after the effect was done. */
  readonly rerun: number;
}

export async function tallyBatch(
  api: DrillApi,
  batchId: number,
  expected: number,
  work: DrillWork,
): Promise<BatchTally> {
  const views = ((await api("GET", `/batches/${batchId}/steps?limit=5000`)).steps ?? []) as Array<{
    id: number;
    status: string;
  }>;
  const open = views.filter((step) => ["pending", "dispatched", "polling", "retry"].includes(step.status));
  const succeeded = views.filter((step) => step.status === "succeeded");
  const ids = new Set(views.map((step) => `step-${step.id}`));
  const records = work
    .effects()
    .map((line) => line.split(" ") as [string, string])
    .filter(([step]) => ids.has(step));
  const jobsPerStep = new Map<string, string[]>();
  for (const [step, jobId] of records) jobsPerStep.set(step, [...(jobsPerStep.get(step) ?? []), jobId]);
  const noEffect = succeeded.filter((step) => !jobsPerStep.has(`step-${step.id}`)).length;
  const jobRuns = new Map<string, number>();
  for (const [, jobId] of records) jobRuns.set(jobId, (jobRuns.get(jobId) ?? 0) + 1);
  // A step row not created yet (its phase never dispatched) waits like an open one.
  return {
    expected,
    succeeded: succeeded.length,
    open: open.length + Math.max(0, expected - views.length),
    lost: views.length - succeeded.length - open.length + noEffect,
    duplicated: [...jobRuns.values()].filter((count) => count > 1).length,
    rerun: [...jobsPerStep.values()].filter((jobs) => new Set(jobs).size > 1).length,
  };
}
