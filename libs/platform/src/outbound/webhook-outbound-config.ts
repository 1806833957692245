import { parseAllowedDestinations } from "./allowed-destinations.ts";
import { outboundPolicy, type OutboundPolicy, type Resolver } from "./outbound-policy.ts";

export const WEBHOOK_ALLOWED_HOSTS_ENV = "MATOOLKIT_WEBHOOK_ALLOWED_HOSTS";

/**
 * For entry points: the webhooks' outbound policy. MATOOLKIT_WEBHOOK_ALLOWED_HOSTS lists, comma-
 * separated, exact host names and IP addresses or CIDR ranges that may be private (receivers
 * inside the operator's own network); unset, only public addresses are reached. A bad entry
 * stops the start, naming it.
 */
export function webhookOutboundPolicyFromEnv(
  env: Record<string, string | undefined>,
  resolve?: Resolver,
): OutboundPolicy {
  const entries = (env[WEBHOOK_ALLOWED_HOSTS_ENV] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  let allowed;
  try {
    allowed = parseAllowedDestinations(entries);
  } catch (error) {
    throw new Error(`${WEBHOOK_ALLOWED_HOSTS_ENV}: ${(error as Error).message}`);
  }
  return outboundPolicy({
    allowed,
    allowHint: `set ${WEBHOOK_ALLOWED_HOSTS_ENV} to allow it`,
    ...(resolve === undefined ? {} : { resolve }),
  });
}
