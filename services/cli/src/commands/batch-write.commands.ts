import type { Command } from "commander";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readInputFile } from "./read-file.ts";
import { readAs } from "./views.ts";

// POST /api/batches answers the batch row with runbookName and memberCount (no version).
const createdView = z.looseObject({
  id: z.number(),
  runbookName: z.string(),
  status: z.string(),
  memberCount: z.number(),
});
const advancedView = z.discriminatedUnion("action", [
  z.looseObject({ action: z.literal("init"), batchId: z.number() }),
  z.looseObject({
    action: z.literal("phase"),
    batchId: z.number(),
    phaseName: z.string(),
    // Older servers send neither (issue 30): the phase was dispatched.
    sequence: z.number().optional(),
    phaseStatus: z.string().optional(),
  }),
]);
const cancelledView = z.looseObject({
  batchId: z.number(),
  cancelled: z.looseObject({ phases: z.number(), steps: z.number(), inits: z.number() }),
});
const pausedView = z.looseObject({ batchId: z.number(), status: z.literal("paused") });
const resumedView = z.looseObject({
  batchId: z.number(),
  status: z.literal("active"),
  resent: z.looseObject({ phases: z.number(), pollChecks: z.number(), retryChecks: z.number() }),
});
const addedView = z.looseObject({
  batchId: z.number(),
  members: z.array(z.looseObject({ id: z.number(), memberKey: z.string(), status: z.string() })),
});
const removedView = z.looseObject({ batchId: z.number(), memberId: z.number(), alreadyRemoved: z.boolean() });

interface CreateOptions {
  readonly allowDuplicate?: true;
  readonly externalRef?: string;
}

/** The writing half of `batch` (Admin): create | advance | cancel | pause | resume | add-members | remove-member. */
export function registerBatchWriteCommands(batch: Command, runtime: CommandRuntime): void {
  const idArgument = ["<id>", "batch id", positiveId] as const;

  batch
    .command("create")
    .description("create a manual batch from a CSV of members (header row, one member per line)")
    .argument("<runbook>", "runbook name")
    .argument("<file>", "members CSV")
    .option(
      "--allow-duplicate",
      "create it even if the same runbook and CSV made a batch minutes ago (refused by default: batch.duplicate)",
    )
    .option("--external-ref <ref>", "the change ticket / request id this batch belongs to")
    .action(
      action(runtime, async (session, runbook: string, file: string, options: CreateOptions) => {
        const csv = await readInputFile(session.context.cwd, file, "members CSV");
        const created = await session.api().json("POST", "/batches", {
          query: {
            runbook,
            ...(options.allowDuplicate === true ? { allowDuplicate: "true" } : {}),
            externalRef: options.externalRef,
          },
          body: { text: csv, contentType: "text/csv" },
        });
        session.output.result(created, (value) => {
          const b = readAs(createdView, value, "created batch");
          session.output.line(
            `Created batch ${b.id} of ${b.runbookName} with ${b.memberCount} members (status ${b.status}).`,
          );
          session.output.line(`Next: matoolkit batch advance ${b.id}`);
        });
      }),
    );

  batch
    .command("advance")
    .description("manual batch: dispatch the init steps, then each phase in order")
    .argument(...idArgument)
    .action(
      action(runtime, async (session, id: number) => {
        const advanced = await session.api().json("POST", apiPath("batches", id, "advance"));
        session.output.result(advanced, (value) => {
          const a = readAs(advancedView, value, "advance result");
          if (a.action === "phase" && a.phaseStatus === "awaiting_approval") {
            session.output.line(
              `Batch ${a.batchId}: phase '${a.phaseName}' awaits approval; nothing was sent.`,
            );
            session.output.line(
              `Next: matoolkit phase approve ${a.batchId} ${a.sequence ?? "<seq>"} (or: matoolkit phase reject …)`,
            );
            return;
          }
          session.output.line(
            a.action === "init"
              ? `Batch ${a.batchId}: init steps dispatched.`
              : `Batch ${a.batchId}: phase '${a.phaseName}' dispatched.`,
          );
        });
      }),
    );

  batch
    .command("cancel")
    .description("cancel a batch: its open phases, steps and init steps")
    .argument(...idArgument)
    .action(
      action(runtime, async (session, id: number) => {
        const cancelled = await session.api().json("POST", apiPath("batches", id, "cancel"));
        session.output.result(cancelled, (value) => {
          const c = readAs(cancelledView, value, "cancel result");
          session.output.line(
            `Batch ${c.batchId} cancelled: ${c.cancelled.phases} phases, ${c.cancelled.steps} steps, ${c.cancelled.inits} init steps.`,
          );
        });
      }),
    );

  batch
    .command("pause")
    .description("pause an active batch: running jobs finish, nothing new is sent until resumed")
    .argument(...idArgument)
    .action(
      action(runtime, async (session, id: number) => {
        const paused = await session.api().json("POST", apiPath("batches", id, "pause"));
        session.output.result(paused, (value) => {
          const p = readAs(pausedView, value, "pause result");
          session.output.line(`Batch ${p.batchId} paused: jobs already sent finish, nothing new is sent.`);
          session.output.line(`Next: matoolkit batch resume ${p.batchId}`);
        });
      }),
    );

  batch
    .command("resume")
    .description("resume a paused batch: what it held back is sent, due phases start")
    .argument(...idArgument)
    .action(
      action(runtime, async (session, id: number) => {
        const resumed = await session.api().json("POST", apiPath("batches", id, "resume"));
        session.output.result(resumed, (value) => {
          const r = readAs(resumedView, value, "resume result");
          session.output.line(
            `Batch ${r.batchId} resumed: ${r.resent.phases} phases restarted, ${r.resent.pollChecks} polls and ${r.resent.retryChecks} retries rescheduled.`,
          );
        });
      }),
    );

  batch
    .command("add-members")
    .description("add members from a CSV to a manual batch (they catch up on the phases already run)")
    .argument(...idArgument)
    .argument("<file>", "members CSV")
    .action(
      action(runtime, async (session, id: number, file: string) => {
        const csv = await readInputFile(session.context.cwd, file, "members CSV");
        const added = await session.api().json("POST", apiPath("batches", id, "members"), {
          body: { text: csv, contentType: "text/csv" },
        });
        session.output.result(added, (value) => {
          const a = readAs(addedView, value, "added members");
          session.output.line(`Added ${a.members.length} members to batch ${a.batchId}.`);
          session.output.table(
            a.members,
            [
              { header: "ID", value: (m) => m.id, align: "right" },
              { header: "MEMBER KEY", value: (m) => m.memberKey, shrink: true },
              { header: "STATUS", value: (m) => m.status },
            ],
            "",
          );
        });
      }),
    );

  batch
    .command("remove-member")
    .description("remove a member (its on_member_removed steps run, its pending steps are cancelled)")
    .argument("<batch-id>", "batch id", positiveId)
    .argument("<member-id>", "member id (from batch members)", positiveId)
    .action(
      action(runtime, async (session, batchId: number, memberId: number) => {
        const removed = await session.api().json("DELETE", apiPath("batches", batchId, "members", memberId));
        session.output.result(removed, (value) => {
          const r = readAs(removedView, value, "removal result");
          session.output.line(
            r.alreadyRemoved
              ? `Member ${r.memberId} of batch ${r.batchId} was already removed.`
              : `Removed member ${r.memberId} from batch ${r.batchId}.`,
          );
        });
      }),
    );
}
