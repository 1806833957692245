import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for a Databricks workspace that speaks the SQL Statement Execution API 2.0
 * as documented (statement states, manifest, INLINE JSON_ARRAY chunks linked by
 * next_chunk_internal_link, cancel). Tests only; it listens on 127.0.0.1.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: unknown;
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
}

export interface StandIn {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const statementId = "01ef-standin-statement";
const base = "/api/2.0/sql/statements";

export async function startStatementApiStandIn(scenario: StandInScenario): Promise<StandIn> {
  const requests: RecordedRequest[] = [];
  let statusCalls = 0;
  const server = createServer((request, response) => {
    void readJson(request).then((body) => {
      const recorded = {
        method: request.method ?? "",
        path: request.url ?? "",
        authorization: request.headers.authorization,
        body,
      };
      requests.push(recorded);
      const { status, json } = route(recorded);
      response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(json));
    });
  });

  function route(request: RecordedRequest): { status: number; json: unknown } {
    const path = request.path.split("?")[0] ?? "";
    if (request.method === "POST" && path === base) {
      return scenario.submitResponse ?? { status: 200, json: statement(stateAt(0)) };
    }
    if (request.method === "GET" && path === `${base}/${statementId}`) {
      statusCalls += 1;
      return { status: 200, json: statement(stateAt(statusCalls)) };
    }
    const chunk = new RegExp(`^${base}/${statementId}/result/chunks/(\\d+)$`, "u").exec(path);
    if (request.method === "GET" && chunk) return { status: 200, json: chunkData(Number(chunk[1])) };
    if (request.method === "POST" && path === `${base}/${statementId}/cancel`)
      return { status: 200, json: {} };
    return { status: 404, json: { error_code: "NOT_FOUND", message: `no route ${request.method} ${path}` } };
  }

  function stateAt(index: number): string {
    return scenario.states[Math.min(index, scenario.states.length - 1)] ?? "SUCCEEDED";
  }

  function statement(state: string): unknown {
    const chunks = scenario.chunks ?? [];
    const succeeded = state === "SUCCEEDED";
    return {
      statement_id: statementId,
      status: { state, ...(state === "FAILED" && scenario.error ? { error: scenario.error } : {}) },
      ...(succeeded
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
    const chunks = scenario.chunks ?? [];
    const rowOffset = chunks.slice(0, index).reduce((sum, rows) => sum + rows.length, 0);
    const rows = chunks[index] ?? [];
    const next = index + 1 < chunks.length ? index + 1 : undefined;
    return {
      chunk_index: index,
      row_offset: rowOffset,
      row_count: rows.length,
      data_array: rows,
      ...(next === undefined
        ? {}
        : {
            next_chunk_index: next,
            next_chunk_internal_link: `${base}/${statementId}/result/chunks/${next}?row_offset=${rowOffset + rows.length}`,
          }),
    };
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const part of request) text += String(part);
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}
