import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  drillApi,
  drillRunbook,
  writeDrillWork,
  type BatchTally,
  type DrillApi,
  type DrillWork,
} from "./dapr-batch.ts";
import {
  drillBrokerProfiles,
  openDaprDrillStack,
  type DaprDrillStack,
  type DrillBroker,
} from "./dapr-stack.ts";
import { freePort } from "./outage-readiness.ts";
import { startSystem, type SystemProcess } from "./system-process.ts";

/** Settings every Dapr drill reads (`npm run drill` is an entry point: it reads the environment). */
export interface DaprDrillSettings {
  readonly members: number;
  readonly stepSeconds: number;
  readonly seed: number;
  /** Keep the work directory (app log, daprd logs, Redis data) even when the drill passes. */
  readonly keep: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function daprDrillSettings(
  env: Readonly<Record<string, string | undefined>>,
  members = 150,
): DaprDrillSettings {
  return {
    members: Number(env.DRILL_MEMBERS ?? members),
    stepSeconds: Number(env.DRILL_STEP_SECONDS ?? 0.2),
    seed: Number(env.DRILL_SEED ?? 24),
    keep: env.DRILL_KEEP === "1",
    env,
  };
}

/**
 * One Dapr drill's system: the stack (control plane, broker, database, daprd) and the app, the
 * whole all-in-one as a child process in its own process group (support/system-process.ts), so a
 * kill -9 takes all four services at once and nothing else. The runbook is published at open.
 */
export interface DaprDrillSession {
  readonly dir: string;
  readonly stack: DaprDrillStack;
  readonly work: DrillWork;
  readonly api: DrillApi;
  readonly runbook: string;
  readonly appLog: string;
  app(): SystemProcess;
  /** Starts the app again (after a kill); resolves with the seconds until /readyz said ready. */
  startApp(): Promise<number>;
  /** Stops everything; the directory is removed unless kept (failed or DRILL_KEEP=1). */
  close(keep: boolean): Promise<void>;
}

export async function openDaprDrillSession(options: {
  readonly broker: DrillBroker;
  readonly name: string;
  readonly settings: DaprDrillSettings;
  readonly log: (line: string) => void;
}): Promise<DaprDrillSession> {
  const { settings } = options;
  const dir = mkdtempSync(path.join(tmpdir(), `matoolkit-${options.name}-`));
  const dataDir = path.join(dir, "data");
  mkdirSync(dataDir, { recursive: true });
  const work = writeDrillWork(dir);
  const appLog = path.join(dir, "system.log");
  const stack = await openDaprDrillStack({ broker: options.broker, dir, env: settings.env });
  options.log(
    `work dir ${dir} (system.log, daprd/daprd-N.log, control-plane/); daprd ${stack.version}, ` +
      drillBrokerProfiles[options.broker].runsOn,
  );
  const port = await freePort();
  const env: Record<string, string> = {
    ...stack.appEnv,
    MATOOLKIT_DATA_DIR: dataDir,
    PORT: String(port),
    MATOOLKIT_FUNCTIONS_DIR: work.functionsDir,
    MATOOLKIT_CSV_DIR: work.csvDir,
    MATOOLKIT_WORKER_CONCURRENCY: "16",
    DRILL_EFFECT_LOG: work.effectLog,
    LOG_LEVEL: settings.env.LOG_LEVEL?.trim() || "info",
  };
  const start = () =>
    startSystem({ env, inheritedEnv: settings.env, port, logFile: appLog, readyTimeoutMs: 120_000 });
  let app: SystemProcess | undefined;
  const close = async (keep: boolean) => {
    await app?.stop().catch(() => undefined);
    await stack.close(keep);
    if (keep) options.log(`kept the ${stack.kept().join(" and the ")}`);
    if (keep || settings.keep) options.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
  try {
    app = await start();
    const api = await drillApi(() => app!.apiUrl, dataDir);
    const runbook = `${options.name}-${settings.seed}`;
    await api("POST", "/runbooks", drillRunbook(runbook, settings.stepSeconds), "application/yaml");
    return {
      dir,
      stack,
      work,
      api,
      runbook,
      appLog,
      app: () => app!,
      async startApp() {
        const started = Date.now();
        app = await start();
        return (Date.now() - started) / 1000;
      },
      close,
    };
  } catch (error) {
    await close(true);
    throw error;
  }
}

/** Totals over batches, and whether they meet the Dapr drills' targets. */
export function addTallies(tallies: readonly BatchTally[]): BatchTally {
  const sum = (key: keyof BatchTally) => tallies.reduce((total, tally) => total + tally[key], 0);
  return {
    expected: sum("expected"),
    succeeded: sum("succeeded"),
    open: sum("open"),
    lost: sum("lost"),
    duplicated: sum("duplicated"),
    rerun: sum("rerun"),
  };
}

/**
 * 0 lost, 0 duplicated, every step succeeded and none open. A re-run after worker.lost (the
 * function did its effect, its worker died before recording it) is the at-least-once window of
 * a kill, bounded by the jobs running at it: at most `rerunAllowance` (16 per kill of the app).
 */
export function tallyFigures(
  total: BatchTally,
  rerunAllowance: number,
): {
  passed: boolean;
  figures: Record<string, number>;
} {
  return {
    passed:
      total.succeeded === total.expected &&
      total.lost === 0 &&
      total.duplicated === 0 &&
      total.open === 0 &&
      total.rerun <= rerunAllowance,
    figures: {
      "steps expected": total.expected,
      "steps succeeded": total.succeeded,
      lost: total.lost,
      duplicated: total.duplicated,
      [`re-run after worker.lost (allowed ${rerunAllowance})`]: total.rerun,
      stuck: total.open,
    },
  };
}
