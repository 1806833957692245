import {
  checkDestination,
  OutboundRequestError,
  parseOutboundUrl,
  type OutboundPolicy,
} from "@matoolkit/platform";
import { badRequest } from "../http/api-error.ts";

/** A registration does not wait on a slow DNS server longer than this. */
const RESOLVE_TIMEOUT_MS = 10_000;

/**
 * A webhook URL's registration check, under the policy every send obeys: the host resolved now and
 * each address checked; a 400 naming why (e.g. "address 127.0.0.1 is loopback, not allowed; set …
 * to allow it"). The reason is for the Admin registering it; the delivery log never carries it.
 */
export async function refuseUnreachableDestination(urlText: string, policy: OutboundPolicy): Promise<void> {
  const url = parseOutboundUrl(urlText);
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new OutboundRequestError("unresolved", `host ${url.hostname} did not resolve in time`)),
      RESOLVE_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([checkDestination(url, policy), slow]);
  } catch (error) {
    if (error instanceof OutboundRequestError) throw badRequest(`url: ${error.message}`);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
