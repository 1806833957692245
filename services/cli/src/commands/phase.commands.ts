import type { Command } from "commander";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId, wholeNumber } from "./arguments.ts";
import { readAs } from "./views.ts";

const decidedView = z.looseObject({
  batchId: z.number(),
  phaseName: z.string(),
  sequence: z.number(),
  status: z.string(),
  approvalDecision: z.enum(["approved", "rejected"]),
});

/**
 * `phase approve | reject <batch-id> <seq>` (Operator, issue 30): the go / no-go of a phase
 * awaiting approval (POST /api/batches/{id}/phases/{seq}/approve | reject). `phases` is accepted
 * too. The server refuses what does not wait (exit 1, state.conflict naming the status).
 */
export function registerPhaseCommands(program: Command, runtime: CommandRuntime): void {
  const phase = program
    .command("phase")
    .alias("phases")
    .description("decide a phase awaiting approval (runbook `approval: required`)");
  const decisions = [
    {
      name: "approve",
      description: "approve a phase awaiting approval: it is sent now, as if it had just fallen due",
    },
    {
      name: "reject",
      description: "reject a phase awaiting approval: it fails (phase.rejected), nothing of it is sent",
    },
  ] as const;
  for (const decision of decisions) {
    phase
      .command(decision.name)
      .description(decision.description)
      .argument("<batch-id>", "batch id", positiveId)
      .argument("<seq>", "the phase's position in the runbook, from 0 (SEQ in `batch phases`)", wholeNumber)
      .action(
        action(runtime, async (session, batchId: number, seq: number) => {
          const decided = await session
            .api()
            .json("POST", apiPath("batches", batchId, "phases", seq, decision.name));
          session.output.result(decided, (value) => {
            const d = readAs(decidedView, value, `${decision.name} result`);
            session.output.line(
              d.approvalDecision === "approved"
                ? `Batch ${d.batchId}: phase '${d.phaseName}' (${d.sequence}) approved and dispatched.`
                : `Batch ${d.batchId}: phase '${d.phaseName}' (${d.sequence}) rejected: it failed (phase.rejected), nothing was sent.`,
            );
          });
        }),
      );
  }
}
