import { webhookErrorCodes, withDeadline, type WebhookErrorCode } from "@matoolkit/domain";
import { signWebhookBody } from "./signature.ts";

export interface WebhookRequest {
  readonly url: string;
  readonly secret: string;
  readonly event: string;
  readonly deliveryId: number;
  /** The exact bytes sent and signed. */
  readonly body: string;
  readonly now: Date;
}

export interface WebhookAnswer {
  readonly delivered: boolean;
  readonly httpStatus: number | null;
  readonly errorCode: WebhookErrorCode | null;
  readonly durationMs: number;
}

/** `fetch`, injectable for tests. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * One POST, never throwing: every way it can go wrong becomes a reason code (a dead endpoint is
 * the receiver's problem, not a failure of the message). Redirects are not followed (the URL an
 * admin configured is where signed bodies go, nowhere else). The answer's body is drained and
 * dropped: nothing the receiver says is stored or logged.
 */
export async function sendWebhook(
  request: WebhookRequest,
  options: { readonly timeoutMs: number; readonly fetch: Fetch; readonly signal: AbortSignal },
): Promise<WebhookAnswer> {
  const timestamp = String(Math.floor(request.now.getTime() / 1000));
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const status = await withDeadline(options.signal, options.timeoutMs, async (signal) => {
      const response = await options.fetch(request.url, {
        method: "POST",
        redirect: "manual",
        signal,
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "matoolkit-webhooks/1",
          "X-Matoolkit-Event": request.event,
          "X-Matoolkit-Delivery": String(request.deliveryId),
          "X-Matoolkit-Timestamp": timestamp,
          "X-Matoolkit-Signature": signWebhookBody(request.secret, timestamp, request.body),
        },
        body: request.body,
      });
      await response.body?.cancel().catch(() => undefined);
      return response.status;
    });
    return {
      delivered: status >= 200 && status < 300,
      httpStatus: status,
      errorCode: codeOf(status),
      durationMs: elapsed(),
    };
  } catch (error) {
    // Stopping: not the receiver's failure; the caller lets the message go back to the bus.
    if (options.signal.aborted) throw error;
    const timedOut =
      error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError");
    return {
      delivered: false,
      httpStatus: null,
      errorCode: timedOut ? webhookErrorCodes.timeout : webhookErrorCodes.unreachable,
      durationMs: elapsed(),
    };
  }
}

function codeOf(status: number): WebhookErrorCode | null {
  if (status >= 200 && status < 300) return null;
  if (status === 410) return webhookErrorCodes.gone;
  if (status >= 500) return webhookErrorCodes.http5xx;
  if (status >= 400) return webhookErrorCodes.http4xx;
  // 1xx cannot end a request; 3xx is a redirect we do not follow.
  return webhookErrorCodes.redirect;
}
