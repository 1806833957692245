import type { z } from "zod";
import { DataSourceError } from "../datasource-error.ts";
import { describeDriverError } from "../redact.ts";
import { isTransient, parseRetryAfter, withRetries, type Attempt, type RetryPolicy } from "./retry-policy.ts";
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
const statements = "/api/2.0/sql/statements";

/**
 * The workspace calls of the Statement Execution API 2.0, with a Bearer token, each retried on
 * 429/503/TEMPORARILY_UNAVAILABLE as `retry-policy.ts` says. Every error message is built here
 * and has the token removed verbatim (whatever its shape) and quoted literals blanked.
 */
export class StatementApi {
  constructor(
    private readonly fetchFn: typeof fetch,
    private readonly workspace: URL,
    private readonly token: string,
    private readonly signal: AbortSignal,
    private readonly policy: RetryPolicy,
  ) {}

  /**
   * Resubmitting is safe only because it happens after an error ANSWER (429/503/
   * TEMPORARILY_UNAVAILABLE): no statement was created, so none is left running twice. A submit
   * that got no answer at all (connection reset, timeout) may have started one: not resent.
   */
  submit(body: ExecuteStatementRequest): Promise<StatementResponse> {
    return this.call("POST", statements, statementResponseSchema, { body, resend: false });
  }

  get(statementId: string): Promise<StatementResponse> {
    return this.call("GET", `${statements}/${encodeURIComponent(statementId)}`, statementResponseSchema);
  }

  /** Follows `next_chunk_internal_link`, a path on the workspace host. */
  chunk(internalLink: string): Promise<ResultData> {
    return this.call("GET", internalLink, resultDataSchema);
  }

  /** A chunk by index; for EXTERNAL_LINKS it carries freshly signed links (docs: Get Result Data). */
  chunkByIndex(statementId: string, chunkIndex: number): Promise<ResultData> {
    const path = `${statements}/${encodeURIComponent(statementId)}/result/chunks/${chunkIndex}`;
    return this.call("GET", path, resultDataSchema);
  }

  /** Best effort: the statement may already be finished, and the caller is failing anyway. */
  async cancel(statementId: string): Promise<void> {
    const url = new URL(`${statements}/${encodeURIComponent(statementId)}/cancel`, this.workspace);
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

  private call<T>(
    method: string,
    path: string,
    schema: z.ZodType<T>,
    options: { readonly body?: unknown; readonly resend?: boolean } = {},
  ): Promise<T> {
    const url = new URL(path, this.workspace);
    // The token must never leave the workspace, even if a response points somewhere else.
    if (url.origin !== this.workspace.origin) throw this.fail("a result link points outside the workspace");
    return withRetries(() => this.attempt(method, url, schema, options), this.policy, this.signal);
  }

  private async attempt<T>(
    method: string,
    url: URL,
    schema: z.ZodType<T>,
    options: { readonly body?: unknown; readonly resend?: boolean },
  ): Promise<Attempt<T>> {
    const what = `${method} ${url.pathname}`;
    let response: Response;
    try {
      response = await this.fetchFn(url, {
        method,
        headers: this.headers(),
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: this.signal,
      });
    } catch (error) {
      if (this.signal.aborted) throw this.signal.reason as Error;
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const detail = typeof cause?.code === "string" ? cause.code : describeDriverError(error, [this.token]);
      const failure = this.fail(`request ${what} failed (${detail})`, error);
      // Reads are safe to repeat after a lost connection; a submit is not (see submit()).
      if (options.resend === false) throw failure;
      return { transient: failure };
    }
    const json: unknown = await response.json().catch(() => undefined);
    if (this.signal.aborted) throw this.signal.reason as Error;
    if (!response.ok) {
      const failure = this.fail(`HTTP ${response.status} from ${what}${describeApiError(json)}`);
      const code = serviceErrorSchema.safeParse(json).data?.error_code;
      if (!isTransient(response.status, code)) throw failure;
      return {
        transient: failure,
        retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), Date.now()),
      };
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw this.fail(`unexpected response from ${what}`, parsed.error);
    return { value: parsed.data };
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
