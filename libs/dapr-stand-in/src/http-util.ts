import type { IncomingMessage, ServerResponse } from "node:http";

/** Request/response plumbing for the sidecar's HTTP API, with Dapr's error body shape. */

const MAX_BODY_BYTES = 16 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor() {
    super(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    this.name = "BodyTooLargeError";
  }
}

export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

export function sendEmpty(response: ServerResponse, status = 204): void {
  response.writeHead(status);
  response.end();
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
    ...headers,
  });
  response.end(payload);
}

/**
 * Dapr's HTTP error body: `{errorCode, message}`, plus the `details` array with a google.rpc
 * ErrorInfo that newer daprd versions add when the error has a standardized reason.
 */
export function sendDaprError(
  response: ServerResponse,
  status: number,
  errorCode: string,
  message: string,
  reason?: string,
  metadata: Record<string, string> = {},
): void {
  const body: Record<string, unknown> = { errorCode, message };
  if (reason !== undefined) {
    body.details = [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "dapr.io", metadata },
    ];
  }
  sendJson(response, status, body);
}

/** `metadata.<key>=<value>` query parameters, without the prefix, as daprd reads them. */
export function metadataFromQuery(query: URLSearchParams): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [key, value] of query) {
    if (key.startsWith("metadata.") && key.length > "metadata.".length)
      metadata[key.slice("metadata.".length)] = value;
  }
  return metadata;
}

export function headerValue(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
