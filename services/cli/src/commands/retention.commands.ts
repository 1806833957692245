import type { Command } from "commander";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { readAs } from "./views.ts";

const purgeReportView = z.looseObject({
  dryRun: z.boolean(),
  mode: z.string(),
  retentionDays: z.number(),
  endedBefore: z.string(),
  batches: z.array(
    z.looseObject({ batchId: z.number(), status: z.string(), endedAt: z.string(), members: z.number() }),
  ),
  more: z.boolean(),
});

const erasureView = z.looseObject({
  batchIds: z.array(z.number()),
  erasedMembers: z.number(),
  erasedSteps: z.number(),
});

/**
 * Retention (issue 31 item 2, Admin): `purge [--dry-run]` runs the scheduler's daily purge now
 * (POST /api/purge) and `member erase <key> [--force]` erases one person's data in every batch
 * (DELETE /api/members/{key}). Output names batch ids and counts; the key is not printed back.
 */
export function registerRetentionCommands(program: Command, runtime: CommandRuntime): void {
  program
    .command("purge")
    .description(
      "remove the personal data of batches ended more than MATOOLKIT_RETENTION_DAYS ago, now (the server's policy)",
    )
    .option("--dry-run", "list the batches that would be purged; change nothing")
    .action(
      action(runtime, async (session, options: { dryRun?: boolean }) => {
        const dryRun = options.dryRun === true;
        const report = await session.api().json("POST", "/purge", { query: { dryRun } });
        session.output.result(report, (value) => {
          const r = readAs(purgeReportView, value, "purge report");
          const verb = r.dryRun ? "would be purged" : "purged";
          session.output.line(
            `${r.dryRun ? "Dry run: " : ""}${r.batches.length} batch(es) ended before ${r.endedBefore} ${verb} ` +
              `(${r.mode}, retention ${r.retentionDays} days).`,
          );
          session.output.table(
            r.batches,
            [
              { header: "BATCH", value: (b) => b.batchId, align: "right" },
              { header: "STATUS", value: (b) => b.status },
              { header: "ENDED", value: (b) => b.endedAt },
              { header: "MEMBERS", value: (b) => b.members, align: "right" },
            ],
            "",
          );
          if (r.more)
            session.output.line(
              `More batches are due: run matoolkit purge${r.dryRun ? " --dry-run" : ""} again.`,
            );
        });
      }),
    );

  const member = program.command("member").description("one person across batches");
  member
    .command("erase")
    .description(
      "erase a member key's data in every batch (data-subject request); refused while it is in a running batch unless --force",
    )
    .argument("<key>", "the member key (the source's primary key, e.g. a UPN)")
    .option("--force", "erase even where the member's batch is still running")
    .action(
      action(runtime, async (session, key: string, options: { force?: boolean }) => {
        const erased = await session.api().json("DELETE", apiPath("members", key), {
          query: { force: options.force === true ? true : undefined },
        });
        session.output.result(erased, (value) => {
          const e = readAs(erasureView, value, "erasure");
          session.output.line(
            e.erasedMembers === 0
              ? `Nothing left to erase: already erased in batch(es) ${e.batchIds.join(", ")}.`
              : `Erased ${e.erasedMembers} member row(s) in batch(es) ${e.batchIds.join(", ")}; ${e.erasedSteps} step(s) emptied.`,
          );
        });
      }),
    );
}
