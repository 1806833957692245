/**
 * Exchange proxy addresses: `SMTP:` marks the primary, `smtp:` a secondary, `X500:` a legacy DN,
 * other prefixes (`SIP:`, `EUM:`) other kinds. The address part compares case-insensitively; an
 * address given without a prefix is an SMTP address.
 */
const prefixed = /^([A-Za-z0-9]{1,10}):(.+)$/s;

export interface ProxyAddress {
  /** As written: `SMTP`, `smtp`, `X500`… */
  readonly prefix: string;
  readonly address: string;
}

export function parseProxyAddress(value: string): ProxyAddress {
  const match = prefixed.exec(value);
  if (match === null) return { prefix: "smtp", address: value };
  return { prefix: match[1]!, address: match[2]! };
}

/** `smtp:x@y` with the given case of prefix: what is stored in EmailAddresses. */
export function formatProxyAddress({ prefix, address }: ProxyAddress): string {
  return `${prefix}:${address}`;
}

/** Same kind and address, whatever the case and whether primary or secondary. */
export function sameProxyAddress(a: string, b: string): boolean {
  return proxyKey(a) === proxyKey(b);
}

/** What uniqueness is checked on: `smtp:x@y` for both `SMTP:X@Y` and `smtp:x@y`. */
export function proxyKey(value: string): string {
  const { prefix, address } = parseProxyAddress(value);
  return `${prefix.toLowerCase()}:${address.toLowerCase()}`;
}

export function isSmtp(value: string): boolean {
  return parseProxyAddress(value).prefix.toLowerCase() === "smtp";
}

export function isPrimarySmtp(value: string): boolean {
  return parseProxyAddress(value).prefix === "SMTP";
}

/** An SMTP address parameter (`PrimarySmtpAddress`) may be given with or without `smtp:`. */
export function bareSmtp(value: string): string {
  return parseProxyAddress(value).address;
}

export function looksLikeSmtp(address: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address);
}
