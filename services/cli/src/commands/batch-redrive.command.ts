import type { Command } from "commander";
import { z } from "zod";
import { usageError } from "../errors.ts";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readAs } from "./views.ts";

const redrivenView = z.looseObject({
  batchId: z.number(),
  batchStatus: z.string(),
  redriven: z.array(
    z.looseObject({
      memberId: z.number(),
      steps: z.array(z.looseObject({ id: z.number(), stepName: z.string(), jobId: z.string() })),
    }),
  ),
});

/** As the API takes them in one request (POST /api/batches/{id}/redrive: memberIds, 1-1000). */
const MAX_MEMBERS = 1000;

interface RedriveOptions {
  readonly member: number[];
  readonly step?: number;
  readonly allFailed?: boolean;
}

/**
 * `batch redrive <id>` (Operator, issue 12): failed members run again from their failed step, with
 * new job ids. Exactly one of --all-failed, --member (repeatable) or --step; anything else is a
 * usage error (exit 2) and nothing is sent.
 */
export function registerBatchRedriveCommand(batch: Command, runtime: CommandRuntime): void {
  batch
    .command("redrive")
    .description("run failed members again from their failed step (new job ids; ended batches reopen)")
    .argument("<id>", "batch id", positiveId)
    .option("--all-failed", "every failed member of the batch")
    .option("--member <id>", "a failed member (from batch members); repeat for several", collectIds, [])
    .option("--step <id>", "the member of this failed step execution (from batch steps)", positiveId)
    .action(
      action(runtime, async (session, id: number, options: RedriveOptions) => {
        const body = requestBody(options);
        const redriven = await session.api().json("POST", apiPath("batches", id, "redrive"), {
          body: { json: body },
        });
        session.output.result(redriven, (value) => {
          const r = readAs(redrivenView, value, "redrive result");
          const steps = r.redriven.flatMap((member) =>
            member.steps.map((step) => ({ memberId: member.memberId, ...step })),
          );
          session.output.line(
            `Batch ${r.batchId}: ${r.redriven.length} member(s) redriven, ${steps.length} step(s) to run again (batch ${r.batchStatus}).`,
          );
          if (r.batchStatus === "paused")
            session.output.line(`Nothing runs until: matoolkit batch resume ${r.batchId}`);
          session.output.table(
            steps,
            [
              { header: "MEMBER", value: (s) => s.memberId, align: "right" },
              { header: "STEP", value: (s) => s.id, align: "right" },
              { header: "NAME", value: (s) => s.stepName, shrink: true },
              { header: "NEXT JOB", value: (s) => s.jobId },
            ],
            "",
          );
        });
      }),
    );
}

function requestBody(options: RedriveOptions): Record<string, unknown> {
  const given = [
    options.allFailed === true ? "--all-failed" : undefined,
    options.member.length > 0 ? "--member" : undefined,
    options.step !== undefined ? "--step" : undefined,
  ].filter((name) => name !== undefined);
  if (given.length !== 1) {
    throw usageError(
      "usage.invalid",
      given.length === 0
        ? "say what to redrive: --all-failed, --member <id> (repeatable) or --step <id>"
        : `give only one of --all-failed, --member or --step, not ${given.join(" and ")}`,
    );
  }
  if (options.member.length > MAX_MEMBERS) {
    throw usageError("usage.invalid", `at most ${MAX_MEMBERS} --member ids per redrive; use --all-failed`);
  }
  if (options.allFailed === true) return { members: "failed" };
  if (options.step !== undefined) return { stepExecutionId: options.step };
  return { memberIds: [...new Set(options.member)] };
}

function collectIds(value: string, previous: number[]): number[] {
  return [...previous, positiveId(value)];
}
