import type { Command } from "commander";
import { z } from "zod";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId, wholeNumber } from "./arguments.ts";
import { memberCommandGroup } from "./member-group.ts";
import { memberBatchView, readAs, type MemberBatchView } from "./views.ts";

/**
 * `matoolkit member find <key>` (issue 31): every batch a member key is or was in (GET
 * /api/members?key=), newest batch first. The key matches whole, ignoring case. It travels in
 * the query string to the API, which does not log it; the CLI prints it only in the rows found.
 */
export function registerMemberCommands(program: Command, runtime: CommandRuntime): void {
  const member = memberCommandGroup(program);
  member
    .command("find")
    .description("every batch a member key is or was in, with its status there (newest batch first)")
    .argument("<key>", "the member key (the runbook's primary key value, e.g. a UPN); case does not matter")
    .option("--limit <n>", "at most this many (1-1000, default 100)", positiveId)
    .option("--offset <n>", "skip this many", wholeNumber)
    .action(
      action(runtime, async (session, key: string, options: { limit?: number; offset?: number }) => {
        const found = await session.api().json("GET", "/members", {
          query: { key, limit: options.limit, offset: options.offset },
        });
        session.output.result(found, (value) => {
          const rows = readAs(z.array(memberBatchView), value, "member search");
          session.output.table(
            rows,
            [
              { header: "BATCH", value: (m: MemberBatchView) => m.batchId, align: "right" },
              { header: "RUNBOOK", value: (m: MemberBatchView) => `${m.runbookName} v${m.runbookVersion}` },
              { header: "BATCH STATUS", value: (m: MemberBatchView) => m.batchStatus },
              { header: "MEMBER", value: (m: MemberBatchView) => m.memberId, align: "right" },
              { header: "MEMBER STATUS", value: (m: MemberBatchView) => m.memberStatus },
              { header: "ADDED", value: (m: MemberBatchView) => m.addedAt },
              { header: "REMOVED", value: (m: MemberBatchView) => m.removedAt },
              { header: "ERASED", value: (m: MemberBatchView) => m.erasedAt ?? null },
              { header: "REF", value: (m: MemberBatchView) => m.externalRef, shrink: true },
            ],
            "In no batch.",
          );
          if (rows.length === (options.limit ?? 100)) {
            const next = (options.offset ?? 0) + rows.length;
            session.output.line(`More: add --offset ${next}`);
          }
        });
      }),
    );
}
