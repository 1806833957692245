import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The cloud storage behind EXTERNAL_LINKS, on an origin of its own (tests only, 127.0.0.1).
 * Links are pre-signed: the signature in the query string is the only credential, so a request
 * that also carries an Authorization header is refused as S3 and Azure storage refuse it; an
 * expired or revoked link is refused with 403 as S3 ("Request has expired") and Azure
 * (AuthenticationFailed) do; headers announced in `http_headers` are required.
 */
export interface RecordedDownload {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface StorageFailure {
  readonly status: number;
  readonly retryAfter?: string;
}

interface SignedBlob {
  readonly signature: string;
  readonly rows: unknown;
  readonly expiresAt: number;
  revoked: boolean;
}

export interface StorageStandIn {
  readonly origin: string;
  readonly downloads: RecordedDownload[];
  /** A pre-signed link to `rows`, valid until `expiresAt` unless revoked. */
  sign(rows: unknown, expiresAt: number, options: { revoked: boolean }): string;
  revokeAll(): void;
  failNext(count: number, failure: StorageFailure): void;
  close(): Promise<void>;
}

export async function startStorageStandIn(
  requiredHeaders: Readonly<Record<string, string>>,
): Promise<StorageStandIn> {
  const downloads: RecordedDownload[] = [];
  const blobs = new Map<string, SignedBlob>();
  const failures: StorageFailure[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://storage");
    downloads.push({
      path: url.pathname,
      authorization: request.headers.authorization,
      headers: request.headers,
    });
    serve(request, url, response);
  });

  function serve(request: IncomingMessage, url: URL, response: ServerResponse): void {
    const failure = failures.shift();
    if (failure !== undefined) {
      const headers = failure.retryAfter === undefined ? {} : { "Retry-After": failure.retryAfter };
      response
        .writeHead(failure.status, headers)
        .end(xmlError("SlowDown", "Please reduce your request rate."));
      return;
    }
    if (request.headers.authorization !== undefined) {
      const message =
        "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified";
      response.writeHead(400).end(xmlError("InvalidArgument", message));
      return;
    }
    const blob = blobs.get(url.pathname);
    const signed = blob !== undefined && url.searchParams.get("sig") === blob.signature;
    if (!signed || blob.revoked || blob.expiresAt <= Date.now()) {
      response.writeHead(403).end(xmlError("AccessDenied", "Request has expired"));
      return;
    }
    for (const [name, value] of Object.entries(requiredHeaders)) {
      if (request.headers[name.toLowerCase()] !== value) {
        response.writeHead(400).end(xmlError("InvalidRequest", `missing header ${name}`));
        return;
      }
    }
    response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(blob.rows));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    downloads,
    sign(rows, expiresAt, options) {
      const path = `/results/${blobs.size + 1}.json`;
      const signature = randomBytes(12).toString("hex");
      blobs.set(path, { signature, rows, expiresAt, revoked: options.revoked });
      return `${origin}${path}?se=${encodeURIComponent(new Date(expiresAt).toISOString())}&sig=${signature}`;
    },
    revokeAll: () => blobs.forEach((blob) => (blob.revoked = true)),
    failNext: (count, failure) => failures.push(...Array.from({ length: count }, () => failure)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function xmlError(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}
