import type { PublicClientApplication } from "@azure/msal-browser";
import { loadAuthConfig, type AuthConfig } from "./auth-config.ts";
import { signIn } from "./session.ts";

/**
 * Entra ID sign-in with MSAL (authorization code + PKCE, redirect flow) against the admin API's
 * own app registration; the access token for the API's scope becomes the session token. MSAL is
 * loaded only in Entra mode so local mode never downloads it.
 */
type EntraConfig = Extract<AuthConfig, { mode: "entra" }>;

let client: Promise<PublicClientApplication> | undefined;

async function msalFor(config: EntraConfig): Promise<PublicClientApplication> {
  client ??= import("@azure/msal-browser").then(async ({ PublicClientApplication }) => {
    const app = new PublicClientApplication({
      auth: {
        clientId: config.clientId,
        authority: config.authority,
        redirectUri: `${window.location.origin}/`,
      },
      cache: { cacheLocation: "sessionStorage" },
    });
    await app.initialize();
    return app;
  });
  return client;
}

/** Sends the browser to Entra's sign-in page; it comes back to `/` with a code. */
export async function startEntraSignIn(config: EntraConfig): Promise<void> {
  const app = await msalFor(config);
  await app.loginRedirect({ scopes: [...config.scopes] });
}

/**
 * On load: if Entra sent the browser back with a code (in the fragment), redeem it and start a
 * session with the API access token. A no-op in local mode and on ordinary page loads.
 */
export async function completeEntraRedirect(): Promise<void> {
  // Entra answers in the fragment (MSAL's default for SPAs) or, if so configured, the query.
  if (!/[#&?](code|error)=/.test(`${window.location.search}${window.location.hash}`)) return;
  const config = await loadAuthConfig();
  if (config.mode !== "entra") return;
  const app = await msalFor(config);
  // Stay on `/`: the SPA picks its own page; a second navigation would lose the answer above.
  const result = await app.handleRedirectPromise({ navigateToLoginRequestUrl: false });
  if (result === null) return;
  const account = result.account;
  // The sign-in result's token may be for Graph when scopes resolve oddly; ask for the API's own.
  const token =
    account === null
      ? result.accessToken
      : (await app.acquireTokenSilent({ account, scopes: [...config.scopes] })).accessToken;
  signIn(token);
  history.replaceState(null, "", `${window.location.pathname}#/runbooks`);
}
