import type { ExecutionStatus } from "@matoolkit/domain";
import type { Generated, GeneratedAlways } from "kysely";
import type {
  CreatedAt,
  JsonColumn,
  JsonColumnWithDefault,
  JsonObject,
  NullableTimestamp,
  StatusColumn,
} from "./column-types.ts";

/**
 * Columns step_executions and init_executions share (000 "init_executions: same columns as
 * step_executions"). Both follow `executionMachine`.
 */
export interface ExecutionColumns {
  id: GeneratedAlways<number>;
  batchId: number;
  stepName: string;
  /** 0-based order within the phase (steps) or the init list (inits). */
  stepIndex: number;
  workerId: string;
  /** Resolved PowerShell function name. */
  functionName: string;
  paramsJson: JsonColumnWithDefault<JsonObject>;
  /**
   * False while function_name/params_json still hold templates that wait for an earlier step's
   * worker output; the orchestrator resolves them at dispatch and stores the result.
   */
  paramsResolved: Generated<boolean>;
  status: StatusColumn<ExecutionStatus>;
  /**
   * Generated: status is pending, dispatched or polling (not terminal). The only thing the indexes
   * know of a run's progress, so dispatching a step changes no index (migration 0022); queries for
   * open rows name it for the planner to use the `…_open_idx` partial index.
   */
  isOpen: GeneratedAlways<boolean>;
  /** Worker job id of the latest dispatch (step-{id}, step-{id}-retry-{n}, …). */
  jobId: string | null;
  resultJson: JsonColumn<unknown>;
  /** Sanitised error text; never secrets or member PII. */
  errorMessage: string | null;
  /** Stable reason code, e.g. `graph.throttled`. */
  errorCode: string | null;
  dispatchedAt: NullableTimestamp;
  completedAt: NullableTimestamp;
  isPollStep: Generated<boolean>;
  pollIntervalSec: number | null;
  pollTimeoutSec: number | null;
  pollStartedAt: NullableTimestamp;
  lastPolledAt: NullableTimestamp;
  pollCount: Generated<number>;
  /** Name of the rollback sequence to run when the step fails. */
  onFailure: string | null;
  retryCount: Generated<number>;
  /** Operator redrives of this execution (issue 12): part of its job ids (`step-{id}-redrive-{n}`). */
  redriveCount: Generated<number>;
  maxRetries: Generated<number>;
  retryIntervalSec: number | null;
  retryAfter: NullableTimestamp;
  timeoutSec: number | null;
  createdAt: CreatedAt;
}
