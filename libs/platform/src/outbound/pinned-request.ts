import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { OutboundRequestError } from "./outbound-errors.ts";
import { checkDestination, type CheckedDestination, type OutboundPolicy } from "./outbound-policy.ts";
import { parseOutboundUrl } from "./outbound-url.ts";

export interface PinnedRequest {
  readonly method: "POST" | "GET";
  readonly headers: OutgoingHttpHeaders;
  readonly body?: string;
  /** Deadline of the whole exchange: resolution, connection, request and response head. */
  readonly timeoutMs: number;
  /** Aborts the request (the caller is stopping); rejects with the signal's reason. */
  readonly signal: AbortSignal;
}

export interface PinnedAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

/**
 * Sends one request under the outbound policy: the URL parsed strictly, its host resolved and
 * every address checked now, then the connection made to those checked addresses only (a
 * `lookup` that answers them, never the resolver again), while the Host header and TLS SNI and
 * certificate check keep the host name. No redirect is followed (a 3xx is returned as is), no
 * connection is reused (`agent: false`: a pooled socket could be one opened to another address),
 * and the answer's body is never read: the socket is closed once the status line and headers
 * (Node caps them at 16 KiB) arrived, so a receiver cannot make us read or hold anything more.
 */
export async function sendPinnedRequest(
  urlText: string,
  policy: OutboundPolicy,
  request: PinnedRequest,
): Promise<PinnedAnswer> {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const signal = AbortSignal.any([request.signal, deadline]);
  const url = parseOutboundUrl(urlText);
  const destination = await untilAborted(checkDestination(url, policy), signal, request.signal);
  return new Promise<PinnedAnswer>((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const outgoing = send(
      {
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: request.headers,
        agent: false,
        lookup: pinnedLookup(destination),
        signal,
      },
      (response) => {
        resolve({ status: response.statusCode ?? 0, headers: response.headers });
        response.destroy();
      },
    );
    outgoing.once("error", (error: Error & { code?: string }) => {
      if (request.signal.aborted) reject(request.signal.reason as Error);
      else if (deadline.aborted) reject(timedOut());
      else
        reject(
          new OutboundRequestError(
            "connect_failed",
            `${destination.host}: ${error.code ?? "connection failed"}`,
            error.code,
          ),
        );
    });
    outgoing.end(request.body);
  });
}

/** The checked addresses, whatever name Node asks about (it asks for the URL's host). */
export function pinnedLookup(destination: CheckedDestination): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
    const matching = destination.addresses.filter((entry) => wanted === undefined || entry.family === wanted);
    if (matching.length === 0) {
      const error = Object.assign(new Error("no checked address of the requested family"), {
        code: "ENOTFOUND",
      });
      callback(error, "", 0);
      return;
    }
    if (options.all === true) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(
        null,
        matching.map(({ address, family }) => ({ address, family })),
      );
    } else {
      callback(null, matching[0]!.address, matching[0]!.family);
    }
  };
}

/** The resolution, unless `signal` (the caller's or the deadline) aborts first: slow DNS counts against the deadline. */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal, caller: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody waits for the work any more: its failure must not become an unhandled rejection
    // (Node ends the process on one). Seen when a delivery started as its notifier stopped.
    work.catch(() => undefined);
    throw caller.aborted ? (caller.reason as Error) : timedOut();
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(caller.aborted ? (caller.reason as Error) : timedOut());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function timedOut(): OutboundRequestError {
  return new OutboundRequestError("timeout", "no answer within the deadline", "ETIMEDOUT");
}
