import { DataSourceError } from "../datasource-error.ts";
import { isTransient, parseRetryAfter, withRetries, type Attempt, type RetryPolicy } from "./retry-policy.ts";
import type { ExternalLink } from "./statement-schemas.ts";
import { isLoopback } from "./workspace-url.ts";

export interface DownloadDeps {
  readonly fetch: typeof fetch;
  readonly signal: AbortSignal;
  readonly policy: RetryPolicy;
}

/** A chunk's rows, or the storage's refusal of the link (expired, or revoked early). */
export type Download = { readonly rows: unknown[][] } | { readonly refused: number };

/**
 * Downloads one EXTERNAL_LINKS chunk from cloud storage. Databricks documents (Execute
 * Statement, "EXTERNAL_LINKS"): the URL carries its own short-lived credential and "you must not
 * set an Authorization header in the download requests" (the storage host is not the
 * workspace: our token would leak to it, and Azure/AWS storage reject a second credential), but
 * the link's `http_headers` must be sent. The URL (a credential) never appears in an error.
 *
 * "The behavior when attempting to use an expired link is cloud specific" (Disposition docs):
 * Azure and AWS answer 403, and a link whose object is gone 404; both come back as `refused`
 * so the caller can fetch a fresh link.
 */
export async function downloadChunk(link: ExternalLink, deps: DownloadDeps): Promise<Download> {
  const chunk = `result chunk ${link.chunk_index}`;
  const url = storageUrl(link.external_link, chunk);
  const headers = { ...link.http_headers, Accept: "application/json" };
  return withRetries(
    async (): Promise<Attempt<Download>> => {
      let response: Response;
      try {
        response = await deps.fetch(url, { method: "GET", headers, signal: deps.signal });
      } catch (error) {
        if (deps.signal.aborted) throw deps.signal.reason as Error;
        // Only the code: the driver's error could quote the URL, a credential.
        const code = (error as { cause?: { code?: unknown } }).cause?.code;
        const detail = typeof code === "string" ? ` (${code})` : "";
        return { transient: fail(`${chunk}: download failed${detail}`) };
      }
      if (response.status === 403 || response.status === 404) {
        await response.body?.cancel();
        return { value: { refused: response.status } };
      }
      if (!response.ok) {
        await response.body?.cancel();
        const failure = fail(`${chunk}: HTTP ${response.status} from the result download`);
        if (!isTransient(response.status, undefined)) throw failure;
        return {
          transient: failure,
          retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), Date.now()),
        };
      }
      const json: unknown = await response.json().catch(() => undefined);
      if (deps.signal.aborted) throw deps.signal.reason as Error;
      if (!isRowArray(json)) throw fail(`${chunk}: the download is not a JSON_ARRAY result`);
      return { value: { rows: json } };
    },
    deps.policy,
    deps.signal,
  );
}

/** https only: the URL is a credential. Plain http is accepted on loopback (the test stand-in). */
function storageUrl(link: string, chunk: string): URL {
  try {
    const url = new URL(link);
    if (url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url))) return url;
  } catch {
    // Reported below without the link: it carries a signature.
  }
  throw fail(`${chunk}: the external link is not an https URL`);
}

/**
 * Checked by hand rather than with zod: zod would copy every row of a chunk that may hold tens
 * of megabytes, and the rows are read one by one right after.
 */
function isRowArray(json: unknown): json is unknown[][] {
  return Array.isArray(json) && json.every((row) => Array.isArray(row));
}

function fail(problem: string): DataSourceError {
  return new DataSourceError("databricks", problem);
}
