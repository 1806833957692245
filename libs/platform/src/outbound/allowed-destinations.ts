import { BlockList, isIP } from "node:net";

/**
 * What the operator allowed despite the address policy, for receivers inside their own network
 * (MATOOLKIT_WEBHOOK_ALLOWED_HOSTS): exact host names (every address they resolve to is then
 * allowed) and IP addresses or CIDR ranges (an address inside one is allowed, whatever host
 * name led to it). Empty by default: nothing private is reachable.
 */
export interface AllowedDestinations {
  readonly hosts: ReadonlySet<string>;
  readonly networks: BlockList;
  /** The entries as given, for the start-up log. */
  readonly entries: readonly string[];
}

export const noAllowedDestinations: AllowedDestinations = {
  hosts: new Set(),
  networks: new BlockList(),
  entries: [],
};

const hostName =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/iu;

/** Parses the entries; throws naming the first one that is neither a host name, an IP nor a CIDR. */
export function parseAllowedDestinations(entries: readonly string[]): AllowedDestinations {
  const hosts = new Set<string>();
  const networks = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    const bare = entry.replace(/^\[(.*)\]$/u, "$1");
    const [network = "", prefixText, ...rest] = bare.split("/");
    const family = isIP(network);
    if (family !== 0 && rest.length === 0) {
      const type = family === 4 ? "ipv4" : "ipv6";
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (!/^\d{1,3}$/u.test(prefixText ?? String(max)) || prefix > max) {
        throw new Error(`'${entry}' has an invalid prefix length (0-${max})`);
      }
      networks.addSubnet(network, prefix, type);
    } else if (prefixText === undefined && hostName.test(entry)) {
      hosts.add(entry.replace(/\.$/u, "").toLowerCase());
    } else {
      throw new Error(`'${entry}' is neither a host name, an IP address nor a CIDR range`);
    }
  }
  return { hosts, networks, entries: entries.map((entry) => entry.trim()) };
}
