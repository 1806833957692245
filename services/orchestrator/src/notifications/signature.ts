import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * `X-Matoolkit-Signature: sha256=<hex>`: HMAC-SHA256, keyed with the webhook's secret, of
 * `<X-Matoolkit-Timestamp>.<raw body>`. The timestamp is signed so a captured request cannot be
 * replayed later with a fresh timestamp; receivers reject old ones (docs/operating-batches.md: 5 minutes).
 */
export function signWebhookBody(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** What a receiver does (docs/operating-batches.md sample); constant-time comparison. */
export function verifyWebhookSignature(
  secret: string,
  timestamp: string,
  body: string,
  signature: string,
): boolean {
  const expected = Buffer.from(signWebhookBody(secret, timestamp, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
