import { createHash } from "node:crypto";
import { SignJWT } from "jose";
import { loadOrCreateLocalSigningKey } from "./local-signing-key.ts";
import type { AppRole } from "./principal.ts";

export interface IssueLocalTokenOptions {
  readonly dataDir: string;
  readonly issuer: string;
  readonly audience: string;
  readonly roles: readonly AppRole[];
  /** Becomes `preferred_username` and `name`, i.e. the identity recorded as the actor. */
  readonly name: string;
  readonly ttlSeconds: number;
  /** For tests that need tokens from the past or future; defaults to now. */
  readonly now?: Date;
}

/**
 * Signs an embedded-mode token shaped like an Entra ID access token (same claim names), so the
 * API runs one validation path whichever authority issued the token.
 */
export async function issueLocalToken(options: IssueLocalTokenOptions): Promise<string> {
  if (!Number.isInteger(options.ttlSeconds) || options.ttlSeconds <= 0) {
    throw new Error("ttlSeconds must be a positive whole number of seconds");
  }
  const key = await loadOrCreateLocalSigningKey(options.dataDir);
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  // Same name, same object id: audit trails and `sub` stay stable across re-issued tokens.
  const objectId = uuidFromName(options.name);
  return new SignJWT({
    oid: objectId,
    preferred_username: options.name,
    name: options.name,
    roles: [...options.roles],
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .setSubject(objectId)
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + options.ttlSeconds)
    .sign(key.privateKey);
}

function uuidFromName(name: string): string {
  const hex = createHash("sha256").update(`matoolkit-local:${name}`).digest("hex");
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20, 32)].join(
    "-",
  );
}
