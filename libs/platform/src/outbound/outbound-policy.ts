import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { nonPublicReason } from "./address-ranges.ts";
import { noAllowedDestinations, type AllowedDestinations } from "./allowed-destinations.ts";
import { OutboundRequestError } from "./outbound-errors.ts";
import { hostOf } from "./outbound-url.ts";

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Every address of a host name, as the system resolver gives them (dns.lookup, all). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/**
 * The one policy of every request the server sends to an address a user configured (webhooks):
 * built at the service edge from its configuration and passed down.
 */
export interface OutboundPolicy {
  readonly allowed: AllowedDestinations;
  readonly resolve: Resolver;
  /** Appended to a refusal the operator could lift, e.g. "set X to allow it". */
  readonly allowHint?: string;
}

export const systemResolver: Resolver = async (hostname) => {
  const addresses = await lookup(hostname, { all: true, verbatim: true });
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export function outboundPolicy(options: Partial<OutboundPolicy> = {}): OutboundPolicy {
  return { allowed: noAllowedDestinations, resolve: systemResolver, ...options };
}

/** Where a checked request may connect: the host name (Host header, TLS SNI) and its checked addresses. */
export interface CheckedDestination {
  readonly host: string;
  readonly addresses: readonly ResolvedAddress[];
}

/** Refused even when allowed: no receiver lives there (0.0.0.0 would reach this very host). */
const neverAllowed = new Set(["unspecified", "multicast", "broadcast", "not an IP address"]);

/**
 * Resolves the URL's host now (at each delivery, not once at registration) and checks EVERY
 * address: one refused address refuses the host, so a name cannot mix a public address with an
 * internal one. The caller connects to these addresses only (pinned-request.ts), so a second
 * resolution (DNS rebinding) never decides where the bytes go.
 */
export async function checkDestination(url: URL, policy: OutboundPolicy): Promise<CheckedDestination> {
  const host = hostOf(url);
  const literal = isIP(host);
  let addresses: readonly ResolvedAddress[];
  if (literal === 4 || literal === 6) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await policy.resolve(host);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new OutboundRequestError(
        "unresolved",
        `host ${host} could not be resolved`,
        typeof code === "string" ? code : undefined,
      );
    }
    if (addresses.length === 0) throw new OutboundRequestError("unresolved", `host ${host} has no address`);
  }
  const hostAllowed = policy.allowed.hosts.has(host);
  for (const { address, family } of addresses) {
    const reason = nonPublicReason(address);
    if (reason === undefined) continue;
    const type = family === 6 ? "ipv6" : "ipv4";
    const allowed = hostAllowed || policy.allowed.networks.check(address, type);
    if (allowed && !neverAllowed.has(reason)) continue;
    const of = literal === 0 ? ` (of ${host})` : "";
    const hint = neverAllowed.has(reason) || policy.allowHint === undefined ? "" : `; ${policy.allowHint}`;
    throw new OutboundRequestError(
      "refused_address",
      `address ${address}${of} is ${reason}, not allowed${hint}`,
    );
  }
  return { host, addresses };
}
