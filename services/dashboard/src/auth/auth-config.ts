/**
 * GET /api/auth/config (public, no secrets): how this deployment signs users in. Local mode has
 * no browser sign-in flow (tokens come from the start banner link or `npm run token`); Entra
 * mode names what MSAL needs for auth code + PKCE against the API's app registration.
 */
export type AuthConfig =
  | { readonly mode: "local" }
  | {
      readonly mode: "entra";
      readonly authority: string;
      readonly clientId: string;
      readonly scopes: readonly string[];
    };

let cached: Promise<AuthConfig> | undefined;

export function loadAuthConfig(): Promise<AuthConfig> {
  cached ??= fetch("/api/auth/config", { headers: { Accept: "application/json" } }).then(async (response) => {
    if (!response.ok) throw new Error(`GET /api/auth/config answered ${response.status}`);
    return parseAuthConfig(await response.json());
  });
  return cached;
}

function parseAuthConfig(body: unknown): AuthConfig {
  const value = body as Record<string, unknown>;
  if (value.mode === "local") return { mode: "local" };
  if (
    value.mode === "entra" &&
    typeof value.authority === "string" &&
    typeof value.clientId === "string" &&
    Array.isArray(value.scopes) &&
    value.scopes.every((scope) => typeof scope === "string")
  ) {
    return { mode: "entra", authority: value.authority, clientId: value.clientId, scopes: value.scopes };
  }
  throw new Error("GET /api/auth/config answered an unknown shape");
}
