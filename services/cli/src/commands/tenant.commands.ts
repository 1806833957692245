import type { Command } from "commander";
import { z } from "zod";
import { tenantCheckReportSchema } from "@matoolkit/domain";
import { exitCodes } from "../errors.ts";
import { apiPath } from "../http/api-client.ts";
import { action, type CommandRuntime } from "./action.ts";
import { positiveId } from "./arguments.ts";
import { readAs } from "./views.ts";

const tenantChangeView = z.looseObject({
  sequence: z.number(),
  at: z.string(),
  member: z.string().nullable(),
  batchId: z.number().nullable(),
  operation: z.string(),
  target: z.string(),
  detail: z.string(),
});
type TenantChangeView = z.infer<typeof tenantChangeView>;

/**
 * `matoolkit tenant check`: the pre-flight check of the worker's target tenant (POST
 * /api/tenant/check). Exit code 1 when a line failed, so a script can stop before a batch.
 * `matoolkit tenant changes`: what the rehearsal wrote to the simulated tenant (GET
 * /api/tenant/changes), oldest first, each with the member it is about. UPNs and addresses are
 * shown as the operator already sees them as member keys in `batch members`; the API masks
 * secret-looking values.
 */
export function registerTenantCommands(program: Command, runtime: CommandRuntime): void {
  const tenant = program.command("tenant").description("the worker's target tenant");
  tenant
    .command("check")
    .description(
      "pre-flight check: tokens, granted permissions, Exchange role, B2B policy, verified domains (exit 1 if a line failed)",
    )
    .option("--runbook <name>", "check what this runbook needs (default: every standard function)")
    .option("--version <n>", "the runbook's version (default: its active one)", positiveId)
    .action(
      action(runtime, async (session, options: { runbook?: string; version?: number }) => {
        const answer = await session.api().json("POST", apiPath("tenant", "check"), {
          query: { runbook: options.runbook, version: options.version },
        });
        const report = readAs(tenantCheckReportSchema, answer, "tenant check");
        session.output.result(answer, () => {
          session.output.line(`Tenant: ${report.tenant}`);
          session.output.line(
            report.runbook === null
              ? "Runbook: none (every standard function)"
              : `Runbook: ${report.runbook.name} v${report.runbook.version}`,
          );
          session.output.table(
            report.lines,
            [
              { header: "CHECK", value: (line) => line.check },
              { header: "STATUS", value: (line) => line.status.toUpperCase() },
              { header: "MISSING", value: (line) => line.missing.join(", ") },
              { header: "DETAIL", value: (line) => line.detail },
            ],
            "No lines.",
          );
          session.output.line(
            report.passed ? "Passed." : "FAILED: fix the failed lines before a batch touches the tenant.",
          );
        });
        return report.passed ? exitCodes.ok : exitCodes.failed;
      }),
    );
  tenant
    .command("changes")
    .description(
      "what the worker changed in its simulated tenant, oldest first (a real tenant: see its audit log)",
    )
    .option("--batch <id>", "only the changes about this batch's members", positiveId)
    .action(
      action(runtime, async (session, options: { batch?: number }) => {
        const changes = await session
          .api()
          .json("GET", apiPath("tenant", "changes"), { query: { batchId: options.batch } });
        session.output.result(changes, (value) => {
          const rows = readAs(z.array(tenantChangeView), value, "tenant change log");
          session.output.table(
            rows,
            [
              { header: "SEQ", value: (c: TenantChangeView) => c.sequence, align: "right" },
              { header: "MEMBER", value: (c: TenantChangeView) => c.member },
              { header: "OBJECT", value: (c: TenantChangeView) => c.target },
              { header: "OPERATION", value: (c: TenantChangeView) => c.operation },
              { header: "CHANGE", value: (c: TenantChangeView) => c.detail, shrink: true },
            ],
            "No changes: the simulated tenant is as it was seeded.",
          );
        });
      }),
    );
}
