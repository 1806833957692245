import type { TenantClients } from "../tenant/tenant-clients.ts";

/**
 * What a worker function is: the TypeScript counterpart of a PowerShell function in the cloud
 * worker's Standard or Custom library. It receives the job's resolved parameters and returns any
 * JSON value; it signals failure by throwing (a MatoolkitError carries the reason code reported
 * as `Error.Type`).
 */
export interface WorkerFunctionContext {
  readonly jobId: string;
  readonly stepExecutionId: number;
  readonly isInitStep: boolean;
  readonly batchId: number;
  /**
   * 1 on the first invocation for this job, 2+ when the worker invokes the function again after
   * it was throttled or its service was unavailable (`*.throttled`, `*.unavailable`: see
   * throttle-retry.ts). Reported back as `Error.Attempts`. Orchestrator
   * retries arrive as new jobs (new JobId) and start again at 1.
   */
  readonly attempt: number;
  /** Aborted when the job exceeds its timeout or the worker stops; long calls must honour it. */
  readonly signal: AbortSignal;
  /** The target tenant's Graph and Exchange clients, shared by every job of this worker. */
  readonly tenant: TenantClients;
}

export type WorkerFunction = ((
  params: Record<string, unknown>,
  context: WorkerFunctionContext,
) => Promise<unknown>) &
  WorkerFunctionTraits;

/** What a function declares about itself, read by the worker (not by the function). */
export interface WorkerFunctionTraits {
  /**
   * True: running it again for the same job is harmless, even when an earlier run was cut off
   * anywhere (its worker killed): it only reads, or it reads before it writes and writes only
   * what differs. A job whose worker died is then simply run again by the next worker; without
   * the declaration that job fails as `worker.lost` and its step follows the runbook's retry
   * policy. Never declare it for a function that sends something (an invitation email) or creates
   * something a second run could create again. Custom functions may set it too.
   */
  readonly safeToRepeat?: boolean;
}

/** Marks `fn` safe to repeat (see WorkerFunctionTraits.safeToRepeat); returns the same function. */
export function safeToRepeat(fn: WorkerFunction): WorkerFunction {
  return Object.assign(fn, { safeToRepeat: true });
}

/**
 * A named group of functions (diagnostics, the Entra and Exchange standard library, custom
 * modules), merged into one registry at start-up.
 */
export type FunctionModule = Readonly<Record<string, WorkerFunction>>;
