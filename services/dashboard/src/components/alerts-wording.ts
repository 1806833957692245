import type { OpenAlert } from "./alerts-api.ts";

export interface AlertLine {
  readonly id: number;
  readonly severity: "critical" | "warning";
  readonly text: string;
  /** Where to look: the batch page when the alert is about a batch, else the runbook's page. */
  readonly href: string | undefined;
}

/** The banner's heading: how many alerts are open, critical ones counted apart. */
export function alertsHeading(alerts: readonly OpenAlert[]): string {
  const critical = alerts.filter((alert) => alert.severity === "critical").length;
  const open = `${alerts.length} open alert${alerts.length === 1 ? "" : "s"}`;
  return critical === 0 ? open : `${open} (${critical} critical)`;
}

/** One line per alert, critical first, then newest first (the API's order within a severity). */
export function alertLines(alerts: readonly OpenAlert[]): AlertLine[] {
  const rank = { critical: 0, warning: 1 } as const;
  return [...alerts]
    .sort((a, b) => rank[a.severity] - rank[b.severity])
    .map((alert) => ({
      id: alert.id,
      severity: alert.severity,
      text: `${alert.summary}: ${alert.subject}`,
      href:
        alert.batchId !== null
          ? `#/batches/${alert.batchId}`
          : alert.runbookName !== null
            ? `#/runbooks/${encodeURIComponent(alert.runbookName)}`
            : undefined,
    }));
}
