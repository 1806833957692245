/**
 * The signed-in session: the bearer token the API accepts, kept in sessionStorage so it lives
 * as long as the tab and never reaches a server log (the start banner passes it in the URL
 * fragment, which browsers do not send). The roles come from the token's claims and only decide
 * what the UI shows; the API enforces them again on every request.
 */
export type Role = "Admin" | "Operator" | "Reader";

export interface Session {
  readonly token: string;
  readonly name: string;
  readonly roles: readonly string[];
  /** Seconds since the epoch; undefined when the token has no `exp`. */
  readonly expiresAt: number | undefined;
}

const STORAGE_KEY = "matoolkit.token";
const listeners = new Set<() => void>();

export function currentSession(): Session | undefined {
  const token = sessionStorage.getItem(STORAGE_KEY);
  if (token === null) return undefined;
  const session = sessionFromToken(token);
  if (session?.expiresAt !== undefined && session.expiresAt * 1000 <= Date.now()) return undefined;
  return session;
}

export function signIn(token: string): Session | undefined {
  const session = sessionFromToken(token.trim());
  if (session === undefined) return undefined;
  sessionStorage.setItem(STORAGE_KEY, session.token);
  notify();
  return session;
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  notify();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(): void {
  for (const listener of listeners) listener();
}

/** Admin includes Operator includes Reader (as libs/auth/src/principal.ts). */
const ladder: readonly Role[] = ["Reader", "Operator", "Admin"];

export function hasRoleOrAbove(session: Session | undefined, role: Role): boolean {
  if (session === undefined) return false;
  return ladder.slice(ladder.indexOf(role)).some((granting) => session.roles.includes(granting));
}

/** Reads the claims without verifying the signature: the API verifies; the UI only needs names. */
export function sessionFromToken(token: string): Session | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined || token.split(".").length !== 3) return undefined;
  try {
    const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    const claims = JSON.parse(json) as Record<string, unknown>;
    const roles = Array.isArray(claims.roles) ? claims.roles.filter((r) => typeof r === "string") : [];
    const name = [claims.preferred_username, claims.name, claims.upn, claims.sub].find(
      (value): value is string => typeof value === "string" && value.length > 0,
    );
    return {
      token,
      name: name ?? "signed in",
      roles,
      expiresAt: typeof claims.exp === "number" ? claims.exp : undefined,
    };
  } catch {
    return undefined;
  }
}
