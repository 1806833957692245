import type { Handler, Response } from "express";
import type { SignInConfig } from "@matoolkit/auth";

/**
 * Response headers that keep browsers from misusing what this server answers (issue 25 finding 5).
 * A few fixed strings, so a small middleware rather than helmet: helmet's defaults differ from
 * what we want on almost every header we set (its CSP allows `https:` and inline styles), and we
 * would end up configuring more than we write.
 *
 * Strict by default: every answer (the API with its errors and 404s, probes, problem pages, the
 * dashboard's assets, the "not built" page) may run nothing and is never cached or sniffed. Only
 * the dashboard page itself (index.html, dashboard-static.ts) replaces the policy with
 * {@link dashboardPageHeaders} and its own Cache-Control.
 */
const strictHeaders: Readonly<Record<string, string>> = {
  // Nothing an API answer says may be rendered as a page that runs code or is framed.
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  // Answers carry member data and tokens' effects: no shared or browser cache keeps them.
  "Cache-Control": "no-store",
  ...commonHeaders(),
};

function commonHeaders(): Record<string, string> {
  return {
    // A JSON or text answer is never taken for script or HTML.
    "X-Content-Type-Options": "nosniff",
    // frame-ancestors for browsers that predate CSP 2 (clickjacking).
    "X-Frame-Options": "DENY",
    // URLs carry batch ids and, on sign-in, a `#token=` fragment's page: no Referer leaves.
    "Referrer-Policy": "no-referrer",
  };
}

/** First middleware of the app, so every answer (errors and 404s included) carries them. */
export const securityHeaders: Handler = (_req, res, next) => {
  setHeaders(res, strictHeaders);
  next();
};

/**
 * The dashboard page's headers. The built dashboard (Vite, services/dashboard) has no inline
 * script or style element and uses no eval: `script-src`/`style-src 'self'` hold. Its components'
 * `style={{…}}` props are set by Preact through the CSSOM (`element.style.x = …`), which CSP does
 * not govern, so no `'unsafe-inline'` (nor `style-src-attr`) is needed; the browser tests
 * (services/dashboard/src/e2e) fail on any CSP violation.
 */
export function dashboardPageHeaders(signIn: SignInConfig): Record<string, string> {
  const entra = entraSources(signIn);
  const policy = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    // data: for small images CSS may inline.
    "img-src 'self' data:",
    `connect-src ${["'self'", ...entra.connect].join(" ")}`,
    ...(entra.frame.length > 0 ? [`frame-src ${entra.frame.join(" ")}`] : []),
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ];
  return { ...commonHeaders(), "Content-Security-Policy": policy.join("; ") };
}

/**
 * What MSAL (the dashboard's Entra sign-in) fetches: the tenant's OpenID metadata and token
 * endpoint under the authority (`{authority}/v2.0/.well-known/openid-configuration`,
 * `{authority}/oauth2/v2.0/token`; a trailing slash makes a CSP source match the paths below it),
 * and, for an instance host it has no built-in metadata for, instance discovery, which MSAL always
 * asks of login.microsoftonline.com (msal-common's AAD_INSTANCE_DISCOVERY_ENDPT). Silent token
 * renewal, once the refresh token no longer serves, loads the tenant's authorize endpoint in a
 * hidden iframe. The sign-in itself is a top-level navigation, which CSP does not restrict.
 */
function entraSources(signIn: SignInConfig): { connect: string[]; frame: string[] } {
  if (signIn.mode !== "entra") return { connect: [], frame: [] };
  const authority = new URL(signIn.authority.endsWith("/") ? signIn.authority : `${signIn.authority}/`).href;
  return { connect: [authority, msalInstanceDiscovery], frame: [authority] };
}

const msalInstanceDiscovery = "https://login.microsoftonline.com/common/discovery/instance";

export function setHeaders(res: Response, headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}
