import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { startStorageStandIn, type RecordedDownload } from "./storage-stand-in.ts";

/**
 * A local stand-in for a Databricks workspace that speaks the SQL Statement Execution API 2.0
 * as documented (statement states, manifest, INLINE JSON_ARRAY chunks linked by
 * next_chunk_internal_link, EXTERNAL_LINKS chunks as pre-signed links on a separate storage
 * origin, `result/chunks/{i}` handing out fresh links, cancel), with the failures a client must
 * survive: the 25 MiB INLINE abort, throttling, expired links. Tests only; it listens on 127.0.0.1.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: unknown;
  /** Date.now() on arrival. */
  readonly at: number;
}

export interface StandInScenario {
  /** State returned by the submit, then by each status poll; the last one repeats. */
  readonly states: readonly string[];
  readonly columns?: ReadonlyArray<{ name: string; type_name: string }>;
  /** Rows of each result chunk, as JSON_ARRAY strings. */
  readonly chunks?: ReadonlyArray<ReadonlyArray<ReadonlyArray<string | null>>>;
  /** status.error of a FAILED statement. */
  readonly error?: { error_code: string; message: string };
  /** Replaces the response of the submit (e.g. an HTTP error). */
  readonly submitResponse?: { status: number; json: unknown };
  /** An INLINE result larger than this (bytes of JSON) fails as Databricks fails it; default 25 MiB. */
  readonly inlineByteLimit?: number;
  /** The first N links issued carry an `expiration` already past (and the storage refuses them). */
  readonly linksIssuedExpired?: number;
  /** The first N links issued look valid but the storage refuses them (403: expired early). */
  readonly linksRefused?: number;
  /** Headers the storage requires with every download, announced as the links' `http_headers`. */
  readonly linkHeaders?: Readonly<Record<string, string>>;
}

/** The workspace's routes and the storage's downloads, for `failNext`. */
export type StandInRoute = "submit" | "poll" | "chunk" | "cancel" | "download";

export interface InjectedFailure {
  readonly status: number;
  /** Sent as Retry-After: delta-seconds or an HTTP date. */
  readonly retryAfter?: string;
  /** The error body's error_code (workspace routes). */
  readonly errorCode?: string;
}

export interface StandIn {
  /** The workspace origin. */
  readonly url: string;
  /** Workspace requests, in order. */
  readonly requests: RecordedRequest[];
  /** Storage requests (EXTERNAL_LINKS downloads), in order. */
  readonly downloads: RecordedDownload[];
  /** The next `count` requests of `route` answer `failure` (and do nothing else). */
  failNext(route: StandInRoute, count: number, failure: InjectedFailure): void;
  /** Every link issued so far stops working (the storage answers 403). */
  expireLinks(): void;
  /** How many cancel requests arrived. */
  cancels(): number;
  close(): Promise<void>;
}

export const standInStatementId = "01ef-standin-statement";
export const defaultInlineByteLimit = 25 * 1024 * 1024;
const base = "/api/2.0/sql/statements";
const linkLifetimeMs = 15 * 60_000;

export async function startStatementApiStandIn(scenario: StandInScenario): Promise<StandIn> {
  const storage = await startStorageStandIn(scenario.linkHeaders ?? {});
  const requests: RecordedRequest[] = [];
  const failures = new Map<StandInRoute, InjectedFailure[]>();
  const chunks = scenario.chunks ?? [];
  const inlineLimit = scenario.inlineByteLimit ?? defaultInlineByteLimit;
  let disposition = "INLINE";
  let statusCalls = 0;
  let linksIssued = 0;
  let canceled = false;

  const server = createServer((request, response) => {
    void readJson(request).then((body) => {
      const recorded = {
        method: request.method ?? "",
        path: request.url ?? "",
        authorization: request.headers.authorization,
        body,
        at: Date.now(),
      };
      requests.push(recorded);
      const { status, json, headers } = route(recorded);
      response
        .writeHead(status, { "Content-Type": "application/json", ...headers })
        .end(JSON.stringify(json));
    });
  });

  type Answer = { status: number; json: unknown; headers?: Record<string, string> };

  function route(request: RecordedRequest): Answer {
    const path = request.path.split("?")[0] ?? "";
    const chunk = new RegExp(`^${base}/${standInStatementId}/result/chunks/(\\d+)$`, "u").exec(path);
    const kind: StandInRoute | undefined =
      request.method === "POST" && path === base
        ? "submit"
        : request.method === "GET" && path === `${base}/${standInStatementId}`
          ? "poll"
          : request.method === "GET" && chunk
            ? "chunk"
            : request.method === "POST" && path === `${base}/${standInStatementId}/cancel`
              ? "cancel"
              : undefined;
    if (kind === undefined)
      return {
        status: 404,
        json: { error_code: "NOT_FOUND", message: `no route ${request.method} ${path}` },
      };
    const failure = failures.get(kind)?.shift();
    if (failure !== undefined) return failed(failure);
    switch (kind) {
      case "submit":
        if (scenario.submitResponse) return scenario.submitResponse;
        disposition = (request.body as { disposition?: string }).disposition ?? "INLINE";
        return { status: 200, json: statement(stateAt(0)) };
      case "poll":
        statusCalls += 1;
        return { status: 200, json: statement(canceled ? "CANCELED" : stateAt(statusCalls)) };
      case "chunk":
        return { status: 200, json: chunkData(Number(chunk?.[1])) };
      case "cancel":
        canceled = true;
        return { status: 200, json: {} };
    }
  }

  function failed(failure: InjectedFailure): Answer {
    const code = failure.errorCode ?? (failure.status === 429 ? "REQUEST_LIMIT_EXCEEDED" : "INTERNAL_ERROR");
    const headers = failure.retryAfter === undefined ? undefined : { "Retry-After": failure.retryAfter };
    return {
      status: failure.status,
      json: { error_code: code, message: "injected by the stand-in" },
      headers,
    };
  }

  function stateAt(index: number): string {
    return scenario.states[Math.min(index, scenario.states.length - 1)] ?? "SUCCEEDED";
  }

  /** Databricks aborts an INLINE statement whose result passes 25 MiB (wording: databrickslabs/ucx#3447). */
  function inlineTooLarge(): boolean {
    return disposition === "INLINE" && Buffer.byteLength(JSON.stringify(chunks)) > inlineLimit;
  }

  function statement(requested: string): unknown {
    const tooLarge = requested === "SUCCEEDED" && inlineTooLarge();
    const state = tooLarge ? "FAILED" : requested;
    const error = tooLarge
      ? {
          error_code: "BAD_REQUEST",
          message: `Inline byte limit exceeded. Statements executed with disposition=INLINE can have a result size of at most ${inlineLimit} bytes. Please execute the statement with disposition=EXTERNAL_LINKS if you want to download the full result.`,
        }
      : scenario.error;
    return {
      statement_id: standInStatementId,
      status: { state, ...(state === "FAILED" && error ? { error } : {}) },
      ...(state === "SUCCEEDED"
        ? {
            manifest: {
              format: "JSON_ARRAY",
              schema: {
                column_count: scenario.columns?.length ?? 0,
                columns: (scenario.columns ?? []).map((column, position) => ({ ...column, position })),
              },
              total_chunk_count: chunks.length,
              total_row_count: chunks.reduce((sum, rows) => sum + rows.length, 0),
            },
            ...(chunks.length > 0 ? { result: chunkData(0) } : {}),
          }
        : {}),
    };
  }

  function chunkData(index: number): unknown {
    const rowOffset = chunks.slice(0, index).reduce((sum, rows) => sum + rows.length, 0);
    const rows = chunks[index] ?? [];
    const next = index + 1 < chunks.length ? index + 1 : undefined;
    const position = {
      chunk_index: index,
      row_offset: rowOffset,
      row_count: rows.length,
      ...(next === undefined
        ? {}
        : {
            next_chunk_index: next,
            next_chunk_internal_link: `${base}/${standInStatementId}/result/chunks/${next}?row_offset=${rowOffset + rows.length}`,
          }),
    };
    if (disposition === "INLINE") return { ...position, data_array: rows };
    return { external_links: [{ ...position, ...issueLink(rows) }] };
  }

  function issueLink(rows: unknown): Record<string, unknown> {
    linksIssued += 1;
    const expired = linksIssued <= (scenario.linksIssuedExpired ?? 0);
    const expiresAt = Date.now() + (expired ? -60_000 : linkLifetimeMs);
    const refused = linksIssued <= (scenario.linksIssuedExpired ?? 0) + (scenario.linksRefused ?? 0);
    return {
      byte_count: Buffer.byteLength(JSON.stringify(rows)),
      external_link: storage.sign(rows, expiresAt, { revoked: refused && !expired }),
      expiration: new Date(expiresAt).toISOString(),
      ...(scenario.linkHeaders === undefined ? {} : { http_headers: scenario.linkHeaders }),
    };
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    downloads: storage.downloads,
    failNext(route, count, failure) {
      if (route === "download") return storage.failNext(count, failure);
      failures.set(route, [...(failures.get(route) ?? []), ...Array.from({ length: count }, () => failure)]);
    },
    expireLinks: () => storage.revokeAll(),
    cancels: () => requests.filter((request) => request.path.endsWith("/cancel")).length,
    close: async () => {
      await storage.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const part of request) text += String(part);
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}
