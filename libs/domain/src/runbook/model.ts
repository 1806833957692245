import type { Condition } from "../conditions/syntax.ts";

/**
 * The normalized, camelCase runbook the rest of the system works with. Produced only by parseRunbook,
 * so every value here has already been validated (offsets/durations converted, references checked).
 */
export const dataSourceTypes = ["dataverse", "databricks", "postgres", "csv"] as const;
export type DataSourceType = (typeof dataSourceTypes)[number];

export const multiValuedFormats = ["semicolon_delimited", "comma_delimited", "json_array"] as const;
export type MultiValuedFormat = (typeof multiValuedFormats)[number];

export interface MultiValuedColumn {
  name: string;
  format: MultiValuedFormat;
}

export interface DataSourceConfig {
  type: DataSourceType;
  /** Name of the environment variable holding the connection string/URL (never the secret itself). */
  connection?: string;
  warehouseId?: string;
  query?: string;
  /** CSV file path (local runs). */
  path?: string;
  primaryKey: string;
  batchTimeColumn?: string;
  batchTime?: "immediate";
  /** `external_ref_column`: a new batch's externalRef is its first member's non-empty value here. */
  externalRefColumn?: string;
  multiValuedColumns: MultiValuedColumn[];
  /** Columns marked `secret_columns`: masked in every read model (mask-secrets.ts). */
  secretColumns?: string[];
  /** `columns`: the columns `when:` conditions may read, besides the ones named above. */
  columns?: string[];
}

/**
 * A `when:` condition (issue 30; docs/runbook-conditions.md): its text as written, for events and
 * the plan, and its parsed form, decided when the step's turn comes (false: the step is skipped).
 */
export interface WhenClause {
  readonly expression: string;
  readonly condition: Condition;
  /** The names it reads (sorted, unique): the plan decides it only when none is known at run time only. */
  readonly references: readonly string[];
}

/**
 * A `for_each:` (issue 30; docs/runbook-for-each.md): the step runs once per value of one list,
 * a multi-valued column or an earlier step's output, each value as `{{item}}` in its params.
 */
export interface ForEachClause {
  /** As written (`"{{Groups}}"`), for the plan and events. */
  readonly expression: string;
  /** The list's name (`Groups`). */
  readonly name: string;
}

export interface RetryConfig {
  maxRetries: number;
  intervalSeconds: number;
}

export interface PollConfig {
  intervalSeconds: number;
  timeoutSeconds: number;
}

export interface StepDefinition {
  name: string;
  workerId: string;
  /** May contain templates (`New-{{ObjectType}}`). */
  function: string;
  params: Record<string, unknown>;
  /** Params marked `secret_params`: masked in every read model, as are the columns they use. */
  secretParams?: string[];
  /** Template variable name → field of the worker's result. */
  outputParams: Record<string, string>;
  onFailure?: string;
  poll?: PollConfig;
  retry?: RetryConfig;
  timeoutSeconds?: number;
  /** Phase steps only: run the step only when this holds for the member, else skip it. */
  when?: WhenClause;
  /** Phase steps only: one execution per value of this list for the member (`{{item}}`). */
  forEach?: ForEachClause;
}

/** What an unanswered approval turns into once its `approval_timeout` has passed. */
export const approvalTimeoutOutcomes = ["approve", "reject"] as const;
export type ApprovalTimeoutOutcome = (typeof approvalTimeoutOutcomes)[number];

/**
 * `approval: required` on a phase (issue 30): when it falls due (or is advanced) it waits in
 * `awaiting_approval` until an operator approves or rejects it, or its timeout applies `timeoutOutcome`.
 */
export interface PhaseApproval {
  /** Absent: the phase waits for as long as it takes. */
  timeoutSeconds?: number;
  /** Applied when the timeout passes; `reject` unless the runbook says otherwise. */
  timeoutOutcome: ApprovalTimeoutOutcome;
}

export interface PhaseDefinition {
  name: string;
  offset: string;
  offsetMinutes: number;
  /** Present when the phase needs an operator's approval before it runs. */
  approval?: PhaseApproval;
  steps: StepDefinition[];
  /** Applies to each of the phase's steps, as if written on each (before the step's own). */
  when?: WhenClause;
}

export interface RunbookDefinition {
  name: string;
  description?: string;
  dataSource: DataSourceConfig;
  retry?: RetryConfig;
  init: StepDefinition[];
  phases: PhaseDefinition[];
  onMemberRemoved: StepDefinition[];
  rollbacks: Record<string, StepDefinition[]>;
}
