import { apiFetch } from "../api/client.ts";

/** GET /api/alerts (issue 31): what the banner reads. */
export interface OpenAlert {
  readonly id: number;
  readonly condition: string;
  readonly severity: "critical" | "warning";
  readonly summary: string;
  readonly subject: string;
  readonly runbookName: string | null;
  readonly batchId: number | null;
  readonly raisedAt: string;
}

export const getOpenAlerts = () => apiFetch<readonly OpenAlert[]>("/alerts?state=open");
