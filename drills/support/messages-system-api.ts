import { setTimeout as sleep } from "node:timers/promises";
import { issueLocalToken } from "@matoolkit/admin-api";

/** The admin API of a drill's system, as an Admin with a locally issued token. */
export interface DrillApi {
  call(method: string, route: string, body?: string, type?: string): Promise<Record<string, unknown>>;
  /** Creates a manual batch of the runbook from a CSV; returns its id. */
  createBatch(runbookName: string, csv: string): Promise<number>;
  /** Advances until the phase is dispatched (an init advance comes first when there is one). */
  startPhase(batchId: number): Promise<void>;
  /** Polls until the batch is completed or failed; returns the last status seen. */
  waitForEnd(batchId: number, timeoutMs: number): Promise<string>;
}

export async function drillApi(apiUrl: string, dataDir: string, name: string): Promise<DrillApi> {
  const token = await issueLocalToken({
    dataDir,
    issuer: "matoolkit-local",
    audience: "api://matoolkit",
    roles: ["Admin"],
    name,
    ttlSeconds: 3600,
  });
  const call: DrillApi["call"] = async (method, route, body, type) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (type !== undefined) headers["content-type"] = type;
    const response = await fetch(`${apiUrl}/api${route}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (response.status >= 400)
      throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
    return text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
  };
  const status = async (batchId: number) => String((await call("GET", `/batches/${batchId}`)).status);
  return {
    call,
    async createBatch(runbookName, csv) {
      return Number((await call("POST", `/batches?runbook=${runbookName}`, csv, "text/csv")).id);
    },
    async startPhase(batchId) {
      for (let advance = 0; advance < 20; advance++) {
        const answer = await call("POST", `/batches/${batchId}/advance`);
        if (answer.action === "phase") return;
        await sleep(500);
      }
      throw new Error(`batch ${batchId}: the phase was never dispatched`);
    },
    async waitForEnd(batchId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        last = await status(batchId).catch(() => last);
        if (last === "completed" || last === "failed") return last;
        await sleep(250);
      }
      return last;
    },
  };
}
