import { z } from "zod";

export const appRoles = ["Admin", "Reader"] as const;
/** App roles defined on the Admin API registration: Admin reads and writes, Reader reads. */
export type AppRole = (typeof appRoles)[number];

export interface Principal {
  /** The token's `sub`: stable per user and app, used to tell callers apart. */
  readonly subject: string;
  /** Who to record as the actor (audit columns such as created_by); see {@link identityFromClaims}. */
  readonly identity: string;
  /** App roles granted to the caller; may include roles this API does not know. */
  readonly roles: readonly string[];
}

// Only the claims we read; anything else in the token is ignored. A claim of the wrong type
// is treated as absent rather than failing the request, except `roles`, which grants access.
const optionalText = z.string().trim().min(1).optional().catch(undefined);
export const principalClaimsSchema = z.object({
  sub: z.string().min(1),
  preferred_username: optionalText,
  name: optionalText,
  oid: optionalText,
  roles: z.array(z.string()).default([]),
});

export type PrincipalClaims = z.input<typeof principalClaimsSchema>;

/** Identity fallback chain from the spec: preferred_username → name → oid → "system". */
export function identityFromClaims(claims: {
  preferred_username?: string | undefined;
  name?: string | undefined;
  oid?: string | undefined;
}): string {
  return claims.preferred_username ?? claims.name ?? claims.oid ?? "system";
}

export function hasRole(principal: Principal, role: AppRole): boolean {
  return principal.roles.includes(role);
}
