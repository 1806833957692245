import { parseCondition } from "../conditions/parse.ts";
import { soleTemplateName } from "../templates/syntax.ts";
import type {
  DataSourceConfig,
  ForEachClause,
  PhaseApproval,
  PhaseDefinition,
  RetryConfig,
  RunbookDefinition,
  StepDefinition,
  WhenClause,
} from "./model.ts";
import { parseDuration, parseOffset } from "./time.ts";
import type { RunbookYaml, StepYaml } from "./yaml-schema.ts";

/** snake_case YAML → camelCase model. Only called once every check passed, so parsing cannot throw. */

type RetryYaml = NonNullable<RunbookYaml["retry"]>;

function toRetry(retry: RetryYaml): RetryConfig {
  // `interval` is only optional for `max_retries: 0`, where it is never used.
  return {
    maxRetries: retry.max_retries,
    intervalSeconds: retry.interval ? parseDuration(retry.interval) : 0,
  };
}

function toStep(step: StepYaml): StepDefinition {
  const definition: StepDefinition = {
    name: step.name,
    workerId: step.worker_id,
    function: step.function,
    params: step.params ?? {},
    outputParams: step.output_params ?? {},
  };
  if (step.secret_params !== undefined) definition.secretParams = step.secret_params;
  if (step.on_failure !== undefined) definition.onFailure = step.on_failure;
  if (step.poll) {
    definition.poll = {
      intervalSeconds: parseDuration(step.poll.interval),
      timeoutSeconds: parseDuration(step.poll.timeout),
    };
  }
  if (step.retry) definition.retry = toRetry(step.retry);
  if (step.timeout !== undefined) definition.timeoutSeconds = parseDuration(step.timeout);
  if (step.when !== undefined) definition.when = toWhen(step.when);
  if (step.for_each !== undefined) definition.forEach = toForEach(step.for_each);
  return definition;
}

/** for-each-rules.ts has checked it is one `{{Name}}`, so this cannot fail. */
function toForEach(expression: string): ForEachClause {
  const name = soleTemplateName(expression.trim());
  if (name === undefined) throw new Error("unchecked for_each: clause");
  return { expression, name };
}

/** when-rules.ts has parsed every condition already, so this cannot fail. */
function toWhen(expression: string): WhenClause {
  const parsed = parseCondition(expression);
  if (!parsed.ok) throw new Error(`unchecked when: condition (${parsed.problem.message})`);
  const references = [...new Set(parsed.references.map((reference) => reference.name))].sort();
  return { expression, condition: parsed.condition, references };
}

function toDataSource(source: RunbookYaml["data_source"]): DataSourceConfig {
  const config: DataSourceConfig = {
    type: source.type,
    primaryKey: source.primary_key,
    multiValuedColumns: (source.multi_valued_columns ?? []).map(({ name, format }) => ({ name, format })),
  };
  if (source.connection !== undefined) config.connection = source.connection;
  if (source.warehouse_id !== undefined) config.warehouseId = source.warehouse_id;
  if (source.query !== undefined) config.query = source.query;
  if (source.path !== undefined) config.path = source.path;
  if (source.batch_time_column !== undefined) config.batchTimeColumn = source.batch_time_column;
  if (source.batch_time !== undefined) config.batchTime = source.batch_time;
  if (source.external_ref_column !== undefined) config.externalRefColumn = source.external_ref_column;
  if (source.secret_columns !== undefined) config.secretColumns = source.secret_columns;
  if (source.columns !== undefined) config.columns = source.columns;
  return config;
}

function toPhase(phase: RunbookYaml["phases"][number]): PhaseDefinition {
  const definition: PhaseDefinition = {
    name: phase.name,
    offset: phase.offset,
    offsetMinutes: parseOffset(phase.offset),
    steps: phase.steps.map(toStep),
  };
  if (phase.when !== undefined) definition.when = toWhen(phase.when);
  if (phase.approval === "required") {
    // Reject unless told otherwise: an unanswered go/no-go is not a go.
    const approval: PhaseApproval = { timeoutOutcome: phase.approval_timeout_outcome ?? "reject" };
    if (phase.approval_timeout !== undefined) approval.timeoutSeconds = parseDuration(phase.approval_timeout);
    definition.approval = approval;
  }
  return definition;
}

export function toRunbookDefinition(runbook: RunbookYaml): RunbookDefinition {
  const definition: RunbookDefinition = {
    name: runbook.name,
    dataSource: toDataSource(runbook.data_source),
    init: (runbook.init ?? []).map(toStep),
    phases: runbook.phases.map(toPhase),
    onMemberRemoved: (runbook.on_member_removed ?? []).map(toStep),
    rollbacks: Object.fromEntries(
      Object.entries(runbook.rollbacks ?? {}).map(([name, steps]) => [name, steps.map(toStep)]),
    ),
  };
  if (runbook.description !== undefined) definition.description = runbook.description;
  if (runbook.retry) definition.retry = toRetry(runbook.retry);
  return definition;
}
