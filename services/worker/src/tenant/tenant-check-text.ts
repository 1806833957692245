import type { TenantCheckReport } from "@matoolkit/domain";

/** The report as text, one line per check (the worker's `npm run tenant:check`). */
export function formatTenantCheckReport(report: TenantCheckReport): string {
  const lines = [
    `Tenant: ${report.tenant}`,
    report.runbook === null
      ? "Runbook: none (every standard function)"
      : `Runbook: ${report.runbook.name} v${report.runbook.version}`,
    ...report.lines.map(
      (line) =>
        `${line.status.toUpperCase().padEnd(8)} ${line.check}${line.missing.length > 0 ? ` [missing: ${line.missing.join(", ")}]` : ""}: ${line.detail}`,
    ),
    report.passed ? "Passed." : "FAILED: fix the failed lines before a batch touches the tenant.",
  ];
  return `${lines.join("\n")}\n`;
}
