import type { z } from "zod";
import { DataSourceError } from "../datasource-error.ts";
import { describeDriverError } from "../redact.ts";
import {
  resultDataSchema,
  serviceErrorSchema,
  statementResponseSchema,
  type ExecuteStatementRequest,
  type ResultData,
  type StatementResponse,
} from "./statement-schemas.ts";

/** Cancelling must still reach the workspace after the query's own deadline has passed. */
const cancelTimeoutMs = 10_000;

/**
 * The four calls of the Statement Execution API 2.0, with a Bearer token. Every error message is
 * built here and has the token removed verbatim (whatever its shape) and quoted literals blanked.
 */
export class StatementApi {
  constructor(
    private readonly fetchFn: typeof fetch,
    private readonly workspace: URL,
    private readonly token: string,
    private readonly signal: AbortSignal,
  ) {}

  submit(body: ExecuteStatementRequest): Promise<StatementResponse> {
    return this.call("POST", "/api/2.0/sql/statements", statementResponseSchema, body);
  }

  get(statementId: string): Promise<StatementResponse> {
    return this.call(
      "GET",
      `/api/2.0/sql/statements/${encodeURIComponent(statementId)}`,
      statementResponseSchema,
    );
  }

  /** Follows `next_chunk_internal_link`, a path on the workspace host. */
  chunk(internalLink: string): Promise<ResultData> {
    return this.call("GET", internalLink, resultDataSchema);
  }

  /** Best effort: the statement may already be finished, and the caller is failing anyway. */
  async cancel(statementId: string): Promise<void> {
    const url = new URL(`/api/2.0/sql/statements/${encodeURIComponent(statementId)}/cancel`, this.workspace);
    await this.fetchFn(url, {
      method: "POST",
      headers: this.headers(),
      signal: AbortSignal.timeout(cancelTimeoutMs),
    }).then(
      (response) => response.body?.cancel(),
      () => undefined,
    );
  }

  /** An error about this statement: the token is removed verbatim, literals blanked. */
  fail(problem: string, cause?: unknown): DataSourceError {
    return new DataSourceError("databricks", describeDriverError(problem, [this.token]), { cause });
  }

  private async call<T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const url = new URL(path, this.workspace);
    // The token must never leave the workspace, even if a response points somewhere else.
    if (url.origin !== this.workspace.origin) throw this.fail("a result link points outside the workspace");
    let response: Response;
    try {
      response = await this.fetchFn(url, {
        method,
        headers: this.headers(),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: this.signal,
      });
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason as Error;
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const detail = typeof cause?.code === "string" ? cause.code : describeDriverError(error, [this.token]);
      throw this.fail(`request ${method} ${url.pathname} failed (${detail})`, error);
    }
    const json: unknown = await response.json().catch(() => undefined);
    if (this.signal.aborted) throw this.signal.reason as Error;
    if (!response.ok)
      throw this.fail(`HTTP ${response.status} from ${method} ${url.pathname}${describeApiError(json)}`);
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw this.fail(`unexpected response from ${method} ${url.pathname}`, parsed.error);
    return parsed.data;
  }

  private headers(): Record<string, string> {
    return {
      Authorization: `Bearer ${this.token}`,
      "Content-Type": "application/json",
      Accept: "application/json",
    };
  }
}

/** `: ERROR_CODE message` from a Databricks error body, or nothing. */
export function describeApiError(json: unknown): string {
  const parsed = serviceErrorSchema.safeParse(json);
  if (!parsed.success) return "";
  const { error_code: code, message } = parsed.data;
  const text = [code, message].filter((part) => part !== undefined && part !== "").join(" ");
  return text === "" ? "" : `: ${text}`;
}
