import { Option, type Command } from "commander";
import { z } from "zod";
import { usageError } from "../errors.ts";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readInputFile } from "./read-file.ts";
import type { Session } from "./session.ts";
import { readAs } from "./views.ts";

const plannedStep = z.looseObject({
  step: z.string(),
  functionName: z.string(),
  unresolved: z.array(z.string()),
  resolvedAtRunTime: z.array(z.string()),
  // Issue 30; a server from before it has no conditions.
  whenDecision: z.string().default("always"),
  forEach: z
    .looseObject({ values: z.number().nullable(), problem: z.string().nullable() })
    .nullable()
    .default(null),
});

const planView = z.looseObject({
  runbook: z.looseObject({ name: z.string(), version: z.number() }),
  input: z.string(),
  memberCount: z.number(),
  checkedMemberCount: z.number(),
  unresolvedCount: z.number(),
  batches: z.array(
    z.looseObject({
      batchStartTime: z.string().nullable(),
      init: z.array(plannedStep),
      members: z.array(
        z.looseObject({
          key: z.string(),
          phases: z.array(
            z.looseObject({ phase: z.string(), dueAt: z.string().nullable(), steps: z.array(plannedStep) }),
          ),
        }),
      ),
    }),
  ),
});
type PlanView = z.infer<typeof planView>;

interface PlanRow {
  readonly member: string;
  readonly phase: string;
  readonly due: string | null;
  readonly step: string;
  readonly functionName: string;
  readonly unresolved: string;
  readonly when: string;
  readonly forEach: string;
}

/** The WHEN column: whether the step's `when:` (or its phase's) lets it run for the member. */
const WHEN_WORDS: Readonly<Record<string, string>> = {
  always: "",
  runs: "runs",
  skipped: "skipped",
  at_run_time: "at run time",
  invalid: "condition.invalid",
};

/**
 * `runbook plan <name> (--csv <file> | --source)`: the dry run of issue 12. Prints one line per
 * member step (init steps once per batch) with its resolved function and the templates that would
 * not resolve, and, for a runbook with `when:` conditions, whether each step runs for the member;
 * --json gives the API's whole answer, parameters and conditions included (secrets masked).
 */
export function registerRunbookPlanCommand(runbook: Command, runtime: CommandRuntime): void {
  runbook
    .command("plan")
    .description(
      "dry run: each member's steps with resolved functions and unresolved templates (nothing is written)",
    )
    .argument("<name>", "runbook name")
    .addOption(
      new Option("--csv <file>", "plan the members of this CSV (as for batch create)").conflicts("source"),
    )
    .option("--source", "plan the rows of the runbook's data source")
    .option("--version <version>", "a specific runbook version (default: the active one)", positiveId)
    .option("--limit <n>", "members to list (1-1000, server default 100)", positiveId)
    .action(
      action(
        runtime,
        async (
          session,
          name: string,
          options: { csv?: string; source?: boolean; version?: number; limit?: number },
        ) => {
          if (options.csv === undefined && options.source !== true) {
            throw usageError(
              "usage.missing_input",
              "give the members: --csv <file>, or --source for the runbook's data source",
            );
          }
          const body =
            options.csv === undefined
              ? { json: { source: true } }
              : {
                  text: await readInputFile(session.context.cwd, options.csv, "member CSV"),
                  contentType: "text/csv",
                };
          const plan = await session.api().json("POST", apiPath("runbooks", name, "plan"), {
            body,
            query: { version: options.version, limit: options.limit },
          });
          session.output.result(plan, (value) => printPlan(session, readAs(planView, value, "plan")));
        },
      ),
    );
}

function printPlan(session: Session, plan: PlanView): void {
  const { output } = session;
  const listed = plan.batches.reduce((sum, batch) => sum + batch.members.length, 0);
  output.fields([
    ["Runbook", `${plan.runbook.name} version ${plan.runbook.version}`],
    ["Members", `${plan.memberCount} in the ${plan.input === "csv" ? "CSV" : "source"}, ${listed} listed`],
    [
      "Unresolved",
      `${plan.unresolvedCount} step(s) would fail with template.unresolved (${plan.checkedMemberCount} members checked)`,
    ],
  ]);
  output.line();
  const rows: PlanRow[] = plan.batches.flatMap((batch) => [
    ...batch.init.map((step) => row("(init)", "init", batch.batchStartTime, step)),
    ...batch.members.flatMap((member) =>
      member.phases.flatMap((phase) =>
        phase.steps.map((step) => row(member.key, phase.phase, phase.dueAt, step)),
      ),
    ),
  ]);
  // Only a runbook with conditions gets the WHEN column: the others' tables stay as they were.
  const conditional = rows.some((r) => r.when !== "");
  const expanding = rows.some((r) => r.forEach !== "");
  output.table(
    rows,
    [
      { header: "MEMBER", value: (r) => r.member, shrink: true },
      { header: "PHASE", value: (r) => r.phase },
      { header: "DUE", value: (r) => r.due ?? "manual" },
      { header: "STEP", value: (r) => r.step },
      ...(conditional ? [{ header: "WHEN", value: (r: PlanRow) => r.when }] : []),
      ...(expanding ? [{ header: "FOR EACH", value: (r: PlanRow) => r.forEach }] : []),
      { header: "FUNCTION", value: (r) => r.functionName, shrink: true },
      { header: "UNRESOLVED", value: (r) => r.unresolved, shrink: true },
    ],
    "Nothing to run: no members, or a runbook without steps.",
  );
}

function row(member: string, phase: string, due: string | null, step: z.infer<typeof plannedStep>): PlanRow {
  return {
    member,
    phase,
    due,
    step: step.step,
    functionName: step.functionName,
    unresolved: step.unresolved.length === 0 ? "" : step.unresolved.join(", "),
    when: WHEN_WORDS[step.whenDecision] ?? step.whenDecision,
    forEach: forEachWords(step.forEach),
  };
}

/** The FOR EACH column (issue 30): how many executions the step expands to for the member. */
export function forEachWords(forEach: z.infer<typeof plannedStep>["forEach"]): string {
  if (forEach === null) return "";
  if (forEach.problem !== null) return forEach.problem;
  if (forEach.values === null) return "at run time";
  return forEach.values === 0 ? "0 values (skipped)" : `${forEach.values} value(s)`;
}
