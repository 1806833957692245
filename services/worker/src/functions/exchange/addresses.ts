/**
 * Exchange proxy addresses as the functions compare them: `SMTP:` is the primary, `smtp:` a
 * secondary, `X500:` a legacy DN (cross-tenant mailbox moves need the source's as one). The
 * address part is compared case-insensitively; the prefix case matters only for SMTP, where it is
 * the primary / secondary distinction.
 */
const prefixed = /^([A-Za-z0-9]{1,10}):(.+)$/s;

export interface ProxyAddress {
  /** `undefined` when the value was given without a prefix (a bare SMTP address). */
  readonly prefix: string | undefined;
  readonly address: string;
}

export function parseProxyAddress(value: string): ProxyAddress {
  const match = prefixed.exec(value.trim());
  if (match === null) return { prefix: undefined, address: value.trim() };
  return { prefix: match[1]!, address: match[2]! };
}

/** The address without its prefix, lower-cased: what "is this address taken" compares. */
export function addressKey(value: string): string {
  return parseProxyAddress(value).address.toLowerCase();
}

/** True when `expected` denotes `actual`: same address, and the same prefix when one is given. */
export function proxyAddressMatches(expected: string, actual: string): boolean {
  const want = parseProxyAddress(expected);
  const have = parseProxyAddress(actual);
  if (want.address.toLowerCase() !== have.address.toLowerCase()) return false;
  if (want.prefix === undefined) return true;
  const haveprefix = have.prefix ?? "smtp";
  // SMTP vs smtp is primary vs secondary; X500 vs x500 means nothing.
  return want.prefix.toLowerCase() === "smtp"
    ? want.prefix === haveprefix
    : want.prefix.toLowerCase() === haveprefix.toLowerCase();
}

/** Whether the recipient already has this address under any kind (smtp or SMTP, X500). */
export function hasAddress(addresses: readonly string[], wanted: string): boolean {
  const want = parseProxyAddress(wanted);
  const kind = (want.prefix ?? "smtp").toLowerCase();
  return addresses.some((existing) => {
    const have = parseProxyAddress(existing);
    return (
      (have.prefix ?? "smtp").toLowerCase() === kind &&
      have.address.toLowerCase() === want.address.toLowerCase()
    );
  });
}

/** An SMTP address parameter, accepted with or without `smtp:`, validated loosely. */
export function isSmtpAddress(value: string): boolean {
  const { prefix, address } = parseProxyAddress(value);
  return (
    (prefix === undefined || prefix.toLowerCase() === "smtp") && /^[^\s@:]+@[^\s@]+\.[^\s@]+$/.test(address)
  );
}

/** The address part of an SMTP address parameter (`smtp:a@b` → `a@b`). */
export function bareAddress(value: string): string {
  return parseProxyAddress(value).address;
}
