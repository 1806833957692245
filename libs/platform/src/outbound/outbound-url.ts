import { OutboundRequestError } from "./outbound-errors.ts";

/**
 * Parses a URL the server will send requests to, strictly: an absolute http(s) URL with a host,
 * no user:password (it would be shown back and could leak through proxies), and no whitespace
 * or control characters the WHATWG parser would silently drop. Numeric host forms
 * (2130706433, 0177.0.0.1, 0x7f.1, 127.1) are normalised by the WHATWG parser to dotted
 * IPv4 here, so the address check sees the address the connection would use.
 */
export function parseOutboundUrl(text: string): URL {
  if (
    /\s/u.test(text) ||
    [...text].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)
  ) {
    throw invalid("must not contain whitespace or control characters");
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("must be an absolute http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalid("must be an absolute http:// or https:// URL");
  }
  if (url.hostname === "") throw invalid("must name a host");
  if (url.username !== "" || url.password !== "") {
    throw invalid("must not contain user:password@ credentials");
  }
  return url;
}

/** The host as the resolver and the allow-list see it: no IPv6 brackets, no trailing dot, lower case. */
export function hostOf(url: URL): string {
  const bare = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return bare.replace(/\.$/u, "").toLowerCase();
}

function invalid(problem: string): OutboundRequestError {
  return new OutboundRequestError("invalid_url", problem);
}
