import { batchMachine } from "@matoolkit/domain";
import { Option, type Command } from "commander";
import { z } from "zod";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { intervalSeconds, isoTimestamp, positiveId, wholeNumber } from "./arguments.ts";
import { readBatchMembers } from "./batch-members.ts";
import { watchBatch } from "./batch-watch.ts";
import {
  formatBatchMembers,
  printBatchDetail,
  printEvents,
  printMembers,
  printPhases,
  printSteps,
} from "./batch.views.ts";
import { batchListItemView, readAs, type BatchListItemView } from "./views.ts";

// The batch state machine's states, for a clear usage error (paused included: issue 12 added it).
const batchStatuses = [...batchMachine.states];

interface BatchListOptions {
  readonly status?: string;
  readonly runbook?: string;
  readonly createdBy?: string;
  readonly createdAfter?: string;
  readonly createdBefore?: string;
  readonly externalRef?: string;
  readonly limit?: number;
  readonly offset?: number;
}

/** The reading half of `batch`: list | get | members | phases | steps | events | watch. */
export function registerBatchReadCommands(batch: Command, runtime: CommandRuntime): void {
  const idArgument = ["<id>", "batch id", positiveId] as const;

  batch
    .command("list")
    .description("list batches, newest first")
    .addOption(new Option("--status <status>", "only batches in this status").choices(batchStatuses))
    .option("--runbook <name>", "only batches of this runbook")
    .option("--created-by <identity>", "only batches this operator created (their sign-in name)")
    .option("--created-after <time>", "only batches created at or after this ISO 8601 time", isoTimestamp)
    .option("--created-before <time>", "only batches created before this ISO 8601 time", isoTimestamp)
    .option("--external-ref <ref>", "only batches with this change ticket / request id")
    .option("--limit <n>", "at most this many (1-1000, default 100)", positiveId)
    .option("--offset <n>", "skip this many", wholeNumber)
    .action(
      action(runtime, async (session, options: BatchListOptions) => {
        const { status, runbook, createdBy, createdAfter, createdBefore, externalRef, limit, offset } =
          options;
        const query = { status, runbook, createdBy, createdAfter, createdBefore, externalRef, limit, offset };
        const list = await session.api().json("GET", "/batches", { query });
        session.output.result(list, (value) =>
          session.output.table(
            readAs(z.array(batchListItemView), value, "batch list"),
            [
              { header: "ID", value: (b: BatchListItemView) => b.id, align: "right" },
              {
                header: "RUNBOOK",
                value: (b: BatchListItemView) => `${b.runbookName} v${b.runbookVersion}`,
              },
              { header: "STATUS", value: (b: BatchListItemView) => b.status },
              { header: "OUTCOME", value: (b: BatchListItemView) => b.outcome },
              { header: "MEMBERS", value: (b: BatchListItemView) => formatBatchMembers(b.memberCounts) },
              { header: "MANUAL", value: (b: BatchListItemView) => b.isManual },
              { header: "START", value: (b: BatchListItemView) => b.batchStartTime },
              { header: "DETECTED", value: (b: BatchListItemView) => b.detectedAt },
              { header: "PHASE", value: (b: BatchListItemView) => b.currentPhase },
              { header: "CREATED BY", value: (b: BatchListItemView) => b.createdBy, shrink: true },
              { header: "REF", value: (b: BatchListItemView) => b.externalRef ?? null, shrink: true },
            ],
            "No batches.",
          ),
        );
      }),
    );

  batch
    .command("get")
    .description("show a batch: status, member counts, phases with their progress")
    .argument(...idArgument)
    .action(
      action(runtime, async (session, id: number) => {
        const detail = await session.api().json("GET", apiPath("batches", id));
        session.output.result(detail, (value) => printBatchDetail(session.output, value));
      }),
    );

  batch
    .command("members")
    .description("list a batch's members (all of them, read 500 at a time)")
    .argument(...idArgument)
    .option("--limit <n>", "only the first n members", positiveId)
    .action(
      action(runtime, async (session, id: number, options: { limit?: number }) => {
        const members = await readBatchMembers(session.api(), id, { limit: options.limit });
        session.output.result(members, (value) => printMembers(session.output, value));
      }),
    );

  batch
    .command("phases")
    .description("list a batch's phase executions with member progress")
    .argument(...idArgument)
    .action(
      action(runtime, async (session, id: number) => {
        const phases = await session.api().json("GET", apiPath("batches", id, "phases"));
        session.output.result(phases, (value) => printPhases(session.output, value));
      }),
    );

  batch
    .command("steps")
    .description("list a batch's init and step executions")
    .argument(...idArgument)
    .option("--limit <n>", "step executions per page (1-5000, default 500)", positiveId)
    .option("--offset <n>", "skip this many step executions", wholeNumber)
    .action(
      action(runtime, async (session, id: number, options: { limit?: number; offset?: number }) => {
        const steps = await session.api().json("GET", apiPath("batches", id, "steps"), {
          query: { limit: options.limit, offset: options.offset },
        });
        session.output.result(steps, (value) => printSteps(session.output, value));
      }),
    );

  batch
    .command("events")
    .description("a batch's timeline of status changes, oldest first")
    .argument(...idArgument)
    .option("--after-id <id>", "only events after this id (the last one you saw)", wholeNumber)
    .option("--limit <n>", "at most this many (1-1000, default 100)", positiveId)
    .action(
      action(runtime, async (session, id: number, options: { afterId?: number; limit?: number }) => {
        const page = await session.api().json("GET", apiPath("batches", id, "events"), {
          query: { afterId: options.afterId, limit: options.limit },
        });
        session.output.result(page, (value) => printEvents(session.output, id, value));
      }),
    );

  batch
    .command("watch")
    .description(
      "follow a batch until it ends: phase progress and status changes; exit 0 completed, 3 failed, 4 cancelled",
    )
    .argument(...idArgument)
    .option("--interval <seconds>", "polling interval", intervalSeconds, 2)
    .action(
      action(runtime, async (session, id: number, options: { interval: number }) =>
        watchBatch(session, id, options.interval * 1000),
      ),
    );
}
