import type { Db } from "@matoolkit/db";
import { sanitizeErrorMessage } from "@matoolkit/domain";
import type { Logger } from "@matoolkit/runtime";

/**
 * What `GET /readyz` asks: can this process serve requests right now? The database must answer
 * `SELECT 1` within a short timeout and the message bus must have been started. Each check's
 * state is a fixed phrase (`ok` or why not): the endpoint needs no token, so it never shows
 * hosts, ports or driver errors; those go to the log, once per change.
 */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, string>>;
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

export interface ReadinessOptions {
  readonly db: Db;
  /**
   * Resolves once the message bus can be used: `platform.ready` (at once embedded, where boot
   * started pg-boss; when the sidecar answers in Dapr mode).
   */
  readonly busReady: Promise<unknown>;
  readonly logger: Logger;
  /** How long the database may take to answer; a probe must answer quickly either way. */
  readonly databaseTimeoutMs?: number;
}

const DEFAULT_DATABASE_TIMEOUT_MS = 1000;

export function createReadiness(options: ReadinessOptions): Readiness {
  const timeoutMs = options.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  const ping = singleFlight(async () => {
    await options.db.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
  });
  let lastReport: ReadinessReport | undefined;
  let busState = "not started";
  options.busReady.then(
    () => (busState = "ok"),
    () => (busState = "failed to start"),
  );
  /** Why the last ping failed, for the log only. */
  let lastDatabaseError: string | undefined;

  async function databaseState(): Promise<string> {
    lastDatabaseError = undefined;
    const outcome = await withTimeout(ping(), timeoutMs);
    switch (outcome.kind) {
      case "ok":
        return "ok";
      case "failed":
        lastDatabaseError = sanitizeErrorMessage(String(outcome.error));
        return "unreachable";
      case "timeout":
        return `no answer within ${timeoutMs} ms`;
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown outcome ${String(unreachable)}`);
      }
    }
  }

  return {
    async check() {
      const checks = {
        database: await databaseState(),
        messageBus: busState,
      };
      const report = { ready: Object.values(checks).every((state) => state === "ok"), checks };
      if (lastReport === undefined ? !report.ready : lastReport.ready !== report.ready) {
        if (report.ready) options.logger.info({ checks }, "admin API ready");
        else options.logger.warn({ checks, err: lastDatabaseError }, "admin API not ready");
      }
      lastReport = report;
      return report;
    },
  };
}

/**
 * At most one ping at a time: while the database hangs, probes share the pending ping instead of
 * piling connection attempts onto the pool that requests need.
 */
function singleFlight(run: () => Promise<void>): () => Promise<void> {
  let pending: Promise<void> | undefined;
  return () => {
    pending ??= run().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

type Outcome = { kind: "ok" } | { kind: "failed"; error: unknown } | { kind: "timeout" };

async function withTimeout(work: Promise<void>, timeoutMs: number): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), timeoutMs);
  });
  try {
    return await Promise.race([
      work.then(
        (): Outcome => ({ kind: "ok" }),
        (error: unknown): Outcome => ({ kind: "failed", error }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
