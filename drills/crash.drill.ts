/**
 * Crash drill (issue 11): the whole system killed with `kill -9` mid-phase, then started again on
 * the same data directory. Every step must succeed exactly once, within 60 s of the restart.
 *
 * A manual batch of DRILL_MEMBERS (200) members × 3 steps runs `Drill-Record`, a custom function
 * (written to a temp functions directory) that sleeps a little, so kills land mid-step, then
 * appends `<step> <job id>` to a side-effect log. It is NOT declared safe to repeat: a job cut off
 * by the kill is reported `worker.lost` and retried by the runbook's retry policy (a new job id).
 * Two figures come from the log: `duplicated`, one job id whose function ran twice (what leases
 * must prevent: never allowed), and `re-run after worker.lost`, a step whose function did its
 * effect, was killed before the worker recorded the job completed, and ran again as the retry.
 * The second is the at-least-once window every queue has between a side effect and its record:
 * bounded by the jobs running at the kill (worker concurrency), and harmless for the standard
 * functions, which are idempotent. Each of DRILL_ROUNDS (3) rounds
 * creates a batch, kills the process group at a seeded random point of its phase (DRILL_SEED),
 * restarts and measures. With DATABASE_URL set the system uses that server instead of embedded
 * PostgreSQL (the server survives the kill; the services do not).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { issueLocalToken } from "@matoolkit/admin-api";
import type { DrillContext, DrillOutcome } from "./drill.ts";
import { mulberry32 } from "./support/seeded-random.ts";
import { startSystem, type SystemProcess } from "./support/system-process.ts";

export const description = "kill -9 of the whole system mid-phase, restart: every step once, within 60 s";

const TARGET_SECONDS = 60;
/** How long after a restart an unfinished step counts as stuck. */
const DEADLINE_SECONDS = 120;

const drillFunction = `import { appendFileSync } from "node:fs";
// Drill-Record: sleeps, then records its side effect. Not safe to repeat (no declaration).
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

function runbook(name: string, stepSeconds: number): string {
  const step = (index: number) => `      - name: record-${index}
        worker_id: worker-01
        function: Drill-Record
        params:
          Seconds: "${stepSeconds}"
          Member: "{{Upn}}"`;
  return `name: ${name}
data_source:
  type: csv
  path: members.csv
  primary_key: Upn
  batch_time: immediate
retry:
  max_retries: 3
  interval: 1s
phases:
  - name: migrate
    offset: T-0
    steps:
${[1, 2, 3].map(step).join("\n")}
`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StepView {
  readonly id: number;
  readonly status: string;
}

export interface CrashDrillSettings {
  readonly members: number;
  readonly rounds: number;
  readonly seed: number;
  readonly stepSeconds: number;
  /** Passed on to the system: DATABASE_URL, LOG_LEVEL, MATOOLKIT_WORKER_CONCURRENCY when set. */
  readonly systemEnv: Readonly<Record<string, string>>;
  /** Keep the work directory (system.log, effects.log) for a look afterwards. */
  readonly keep: boolean;
  /** The environment the system inherits (PATH, HOME…); default: none but what the drill sets. */
  readonly inheritedEnv?: Readonly<Record<string, string | undefined>>;
}

export function crashDrillSettings(env: Readonly<Record<string, string | undefined>>): CrashDrillSettings {
  const systemEnv: Record<string, string> = {};
  for (const name of ["DATABASE_URL", "LOG_LEVEL", "MATOOLKIT_WORKER_CONCURRENCY"]) {
    const value = env[name]?.trim();
    if (value) systemEnv[name] = value;
  }
  return {
    members: Number(env.DRILL_MEMBERS ?? 200),
    rounds: Number(env.DRILL_ROUNDS ?? 3),
    seed: Number(env.DRILL_SEED ?? 11),
    stepSeconds: Number(env.DRILL_STEP_SECONDS ?? 0.2),
    systemEnv,
    keep: env.DRILL_KEEP === "1",
  };
}

export function run(context: DrillContext): Promise<DrillOutcome> {
  // A drill is an entry point (`npm run drill`): it reads its settings here and passes them in.
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  return runCrashDrill(context, { ...crashDrillSettings(env), inheritedEnv: env });
}

export async function runCrashDrill(
  context: DrillContext,
  settings: CrashDrillSettings,
): Promise<DrillOutcome> {
  const { members, rounds, seed, stepSeconds } = settings;
  const next = mulberry32(seed);
  const work = mkdtempSync(path.join(tmpdir(), "matoolkit-crash-drill-"));
  const dataDir = path.join(work, "data");
  const functionsDir = path.join(work, "functions");
  const csvDir = path.join(work, "csv");
  const effectLog = path.join(work, "effects.log");
  const logFile = path.join(work, "system.log");
  for (const dir of [dataDir, functionsDir, csvDir]) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(functionsDir, "drill.mjs"), drillFunction);
  writeFileSync(path.join(csvDir, "members.csv"), "Upn\n");
  writeFileSync(effectLog, "");
  const port = 20_000 + Math.floor(next() * 20_000);
  const env: Record<string, string> = {
    MATOOLKIT_DATA_DIR: dataDir,
    PORT: String(port),
    MATOOLKIT_FUNCTIONS_DIR: functionsDir,
    MATOOLKIT_CSV_DIR: csvDir,
    MATOOLKIT_WORKER_CONCURRENCY: "16",
    DRILL_EFFECT_LOG: effectLog,
    LOG_LEVEL: "warn",
    ...settings.systemEnv,
  };
  if (env.DATABASE_URL === undefined) env.MATOOLKIT_EMBEDDED_PG_PORT = String(port + 1);
  context.log(
    `work dir ${work} (system log: system.log), ${members} members × 3 steps, ${rounds} round(s), seed ${seed}`,
  );

  let system: SystemProcess = await startSystem({ env, inheritedEnv: settings.inheritedEnv, port, logFile });
  const token = await issueLocalToken({
    dataDir,
    issuer: "matoolkit-local",
    audience: "api://matoolkit",
    roles: ["Admin"],
    name: "crash-drill@example.test",
    ttlSeconds: 3600,
  });
  const api = async (method: string, route: string, body?: string, type?: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (type) headers["content-type"] = type;
    const response = await fetch(`${system.apiUrl}/api${route}`, { method, headers, body });
    const text = await response.text();
    if (response.status >= 400)
      throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const steps = async (batchId: number) =>
    ((await api("GET", `/batches/${batchId}/steps?limit=5000`)).steps as StepView[]) ?? [];

  const totals = { steps: 0, succeeded: 0, lost: 0, duplicated: 0, rerun: 0, stuck: 0 };
  let worstSeconds = 0;
  let lastSeconds = 0;
  try {
    const name = `crash-drill-${seed}`;
    await api("POST", "/runbooks", runbook(name, stepSeconds), "application/yaml");
    for (let round = 1; round <= rounds; round++) {
      const csv = `Upn\n${Array.from({ length: members }, (_, i) => `r${round}m${i}@contoso.test`).join("\n")}\n`;
      const batchId = (await api("POST", `/batches?runbook=${name}`, csv, "text/csv")).id as number;
      // Advance until the phase is dispatched (an init advance comes first when the runbook has one).
      for (let advance = 0; advance < 3; advance++) {
        const answer = await api("POST", `/batches/${batchId}/advance`);
        if (answer.action === "phase") break;
        await sleep(500);
      }
      const total = members * 3;
      const killAt = Math.floor(total * (0.15 + next() * 0.6));
      const effectsBefore = lines(effectLog).length;
      while (lines(effectLog).length - effectsBefore < killAt) await sleep(20);
      await system.killHard();
      const doneAtKill = lines(effectLog).length - effectsBefore;
      context.log(`round ${round}: batch ${batchId}, kill -9 after ${doneAtKill} of ${total} steps`);

      const restartedAt = Date.now();
      system = await startSystem({ env, inheritedEnv: settings.inheritedEnv, port, logFile });
      const startSeconds = (Date.now() - restartedAt) / 1000;
      let status = "";
      while (Date.now() - restartedAt < DEADLINE_SECONDS * 1000) {
        status = String((await api("GET", `/batches/${batchId}`)).status);
        if (status === "completed" || status === "failed") break;
        await sleep(250);
      }
      const seconds = (Date.now() - restartedAt) / 1000;
      const views = await steps(batchId);
      const succeeded = views.filter((step) => step.status === "succeeded").length;
      const open = views.filter((step) =>
        ["pending", "dispatched", "polling", "retry"].includes(step.status),
      );
      const ids = new Set(views.map((step) => `step-${step.id}`));
      const records = lines(effectLog)
        .map((line) => line.split(" "))
        .filter(([step]) => ids.has(step!));
      // One job id recorded twice: a job ran twice. One step under several job ids: its retry ran.
      const duplicated = [...countBy(records.map(([, jobId]) => jobId!))].filter(
        ([, count]) => count > 1,
      ).length;
      const jobsPerStep = new Map<string, Set<string>>();
      for (const [step, jobId] of records)
        jobsPerStep.set(step!, (jobsPerStep.get(step!) ?? new Set()).add(jobId!));
      const rerun = [...jobsPerStep.values()].filter((jobs) => jobs.size > 1).length;
      totals.steps += total;
      totals.succeeded += succeeded;
      totals.lost += total - succeeded - open.length;
      totals.stuck += open.length;
      totals.duplicated += duplicated;
      totals.rerun += rerun;
      worstSeconds = Math.max(worstSeconds, seconds);
      lastSeconds = seconds;
      context.log(
        `round ${round}: batch ${status} ${seconds.toFixed(1)} s after the restart (system ready after ${startSeconds.toFixed(1)} s); ` +
          `${succeeded} succeeded, ${open.length} open, ${duplicated} duplicated, ${rerun} re-run after worker.lost`,
      );
    }
  } finally {
    await system.stop().catch(() => undefined);
    if (!settings.keep) rmSync(work, { recursive: true, force: true });
  }
  const passed =
    totals.succeeded === totals.steps &&
    totals.lost === 0 &&
    totals.duplicated === 0 &&
    totals.rerun <= Number(env.MATOOLKIT_WORKER_CONCURRENCY) * rounds &&
    totals.stuck === 0 &&
    worstSeconds <= TARGET_SECONDS;
  return {
    passed,
    figures: {
      rounds,
      "steps expected": totals.steps,
      "steps succeeded": totals.succeeded,
      lost: totals.lost,
      duplicated: totals.duplicated,
      "re-run after worker.lost (at most the jobs running at a kill)": totals.rerun,
      stuck: totals.stuck,
      "seconds from last restart to batch completed": lastSeconds.toFixed(1),
      "worst seconds from a restart to batch completed": worstSeconds.toFixed(1),
    },
  };
}

function lines(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}
