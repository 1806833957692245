import { webhookErrorCodes, type WebhookErrorCode } from "@matoolkit/domain";
import { OutboundRequestError, sendPinnedRequest, type OutboundPolicy } from "@matoolkit/platform";
import { signWebhookBody } from "./signature.ts";

export interface WebhookRequest {
  readonly url: string;
  /** The clear secret, decrypted for this send only (webhook-secret.ts). */
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
  /**
   * Why no answer came (refused address, DNS, connection refused, timeout), for the server's
   * log only: the delivery log says `webhook.unreachable` for all of them, so it cannot be used
   * to tell a refused address from a closed port or a silent one.
   */
  readonly detail?: string;
}

export interface SendOptions {
  readonly timeoutMs: number;
  readonly outbound: OutboundPolicy;
  readonly signal: AbortSignal;
}

/**
 * One POST under the outbound policy (libs/platform outbound: address checked at this send,
 * connection pinned to the checked address, no redirect followed, no body read), never throwing
 * for the receiver's failures: each becomes a reason code (a dead endpoint is the receiver's
 * problem, not a failure of the message).
 */
export async function sendWebhook(request: WebhookRequest, options: SendOptions): Promise<WebhookAnswer> {
  const timestamp = String(Math.floor(request.now.getTime() / 1000));
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const { status } = await sendPinnedRequest(request.url, options.outbound, {
      method: "POST",
      timeoutMs: options.timeoutMs,
      signal: options.signal,
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
    return {
      delivered: status >= 200 && status < 300,
      httpStatus: status,
      errorCode: codeOf(status),
      durationMs: elapsed(),
    };
  } catch (error) {
    // Stopping: not the receiver's failure; the caller lets the message go back to the bus.
    if (options.signal.aborted) throw error;
    const detail =
      error instanceof OutboundRequestError
        ? `${error.kind}: ${error.message}`
        : `unexpected ${(error as Error).name}`;
    return {
      delivered: false,
      httpStatus: null,
      errorCode: webhookErrorCodes.unreachable,
      durationMs: elapsed(),
      detail,
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
