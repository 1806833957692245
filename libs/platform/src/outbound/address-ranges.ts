import { BlockList, isIP } from "node:net";

/**
 * The address ranges a server-side request must not reach unless the operator allowed them
 * (MATOOLKIT_WEBHOOK_ALLOWED_HOSTS), each with the reason named in refusals. Checked with Node's
 * own `net.BlockList` (no parsing of ours): it matches IPv4-mapped IPv6 (::ffff:127.0.0.1)
 * against the IPv4 ranges as well. Sources: the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries (RFC 6890 and successors). Order matters: the first range that matches names the
 * reason (::1 is loopback before it is IPv4-compatible).
 */
interface Range {
  readonly reason: string;
  readonly cidrs: readonly string[];
}

const ipv4Ranges: readonly Range[] = [
  { reason: "unspecified", cidrs: ["0.0.0.0/8"] },
  { reason: "loopback", cidrs: ["127.0.0.0/8"] },
  { reason: "private", cidrs: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"] },
  { reason: "carrier-grade NAT (shared)", cidrs: ["100.64.0.0/10"] },
  { reason: "link-local (cloud metadata)", cidrs: ["169.254.169.254/32"] },
  { reason: "link-local", cidrs: ["169.254.0.0/16"] },
  { reason: "IETF protocol assignment", cidrs: ["192.0.0.0/24"] },
  { reason: "documentation", cidrs: ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"] },
  { reason: "benchmarking", cidrs: ["198.18.0.0/15"] },
  { reason: "6to4 relay anycast", cidrs: ["192.88.99.0/24"] },
  { reason: "multicast", cidrs: ["224.0.0.0/4"] },
  { reason: "broadcast", cidrs: ["255.255.255.255/32"] },
  { reason: "reserved", cidrs: ["240.0.0.0/4"] },
];

const ipv6Ranges: readonly Range[] = [
  { reason: "unspecified", cidrs: ["::/128"] },
  { reason: "loopback", cidrs: ["::1/128"] },
  // Any IPv4 address in IPv6 clothing: refused whatever the IPv4 address is.
  { reason: "IPv4-mapped IPv6", cidrs: ["::ffff:0:0/96"] },
  { reason: "IPv4-compatible IPv6", cidrs: ["::/96"] },
  { reason: "IPv4/IPv6 translation (NAT64)", cidrs: ["64:ff9b::/96", "64:ff9b:1::/48"] },
  { reason: "discard-only", cidrs: ["100::/64"] },
  { reason: "IETF protocol assignment (Teredo, benchmarking)", cidrs: ["2001::/23"] },
  { reason: "documentation", cidrs: ["2001:db8::/32", "3fff::/20"] },
  { reason: "6to4 (embeds an IPv4 address)", cidrs: ["2002::/16"] },
  { reason: "unique-local", cidrs: ["fc00::/7"] },
  { reason: "link-local", cidrs: ["fe80::/10"] },
  { reason: "site-local (deprecated)", cidrs: ["fec0::/10"] },
  { reason: "multicast", cidrs: ["ff00::/8"] },
];

interface CompiledRange {
  readonly reason: string;
  readonly list: BlockList;
}

function compile(ranges: readonly Range[], family: "ipv4" | "ipv6"): CompiledRange[] {
  return ranges.map(({ reason, cidrs }) => {
    const list = new BlockList();
    for (const cidr of cidrs) {
      const [network, prefix] = cidr.split("/");
      list.addSubnet(network!, Number(prefix), family);
    }
    return { reason, list };
  });
}

const compiled = { 4: compile(ipv4Ranges, "ipv4"), 6: compile(ipv6Ranges, "ipv6") } as const;

/**
 * Why `address` (an IP literal, no brackets) is not a public unicast address, e.g. "loopback";
 * undefined when it is one. Anything that is not an IP literal is refused as "not an IP address".
 */
export function nonPublicReason(address: string): string | undefined {
  const family = isIP(address);
  if (family !== 4 && family !== 6) return "not an IP address";
  const type = family === 4 ? "ipv4" : "ipv6";
  return compiled[family].find((range) => range.list.check(address, type))?.reason;
}
