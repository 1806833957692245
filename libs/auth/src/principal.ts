import { z } from "zod";

/**
 * App roles defined on the Admin API registration, each including the one below it:
 * Reader reads; Operator also runs batches (advance, cancel, pause, resume, redrive, add and
 * remove members); Admin also changes what runs (publish and deactivate runbooks, automation,
 * create batches, query preview). Role names are case-sensitive, as in Entra.
 */
export const appRoles = ["Admin", "Operator", "Reader"] as const;
export type AppRole = (typeof appRoles)[number];

/** Least privileged first: a role grants everything the roles before it grant. */
const roleLadder: readonly AppRole[] = ["Reader", "Operator", "Admin"];

/** Any of these lets a caller read (least privileged first, as error messages list them). */
export const readRoles: readonly AppRole[] = roleLadder;

/**
 * The roles that satisfy an operation needing `role`: it and every role above it, least
 * privileged first (Operator → Operator, Admin; Admin → Admin).
 */
export function rolesGranting(role: AppRole): readonly AppRole[] {
  return roleLadder.slice(roleLadder.indexOf(role));
}

export interface Principal {
  /** The token's `sub`: stable per user and app, used to tell callers apart. */
  readonly subject: string;
  /** Who to record as the actor (audit columns such as created_by); see {@link identityFromClaims}. */
  readonly identity: string;
  /** App roles granted to the caller; may include roles this API does not know. */
  readonly roles: readonly string[];
  /**
   * Delegated scopes of this API that the token grants and the configuration accepts
   * (AZURE_AD_SCOPES); empty for app-only tokens, local tokens, and when none are configured.
   */
  readonly scopes: readonly string[];
}

// Only the claims we read; anything else in the token is ignored. A claim of the wrong type
// is treated as absent rather than failing the request, except `roles` and `scp`, which grant access.
const optionalText = z.string().trim().min(1).optional().catch(undefined);
export const principalClaimsSchema = z.object({
  sub: z.string().min(1),
  preferred_username: optionalText,
  upn: optionalText,
  unique_name: optionalText,
  name: optionalText,
  oid: optionalText,
  roles: z.array(z.string()).default([]),
  /** Present only in delegated (user) tokens: space-separated scope names. */
  scp: z.string().optional(),
});

export type PrincipalClaims = z.input<typeof principalClaimsSchema>;

/**
 * Identity fallback chain from the spec: preferred_username → name → oid → "system", with the
 * v1.0 token's `upn` and `unique_name` (v1 tokens have no preferred_username) before `name`.
 * v2.0 user tokens always carry preferred_username, so they resolve exactly as the spec says.
 */
export function identityFromClaims(claims: {
  preferred_username?: string | undefined;
  upn?: string | undefined;
  unique_name?: string | undefined;
  name?: string | undefined;
  oid?: string | undefined;
}): string {
  return (
    claims.preferred_username ?? claims.upn ?? claims.unique_name ?? claims.name ?? claims.oid ?? "system"
  );
}

export function hasRole(principal: Principal, role: AppRole): boolean {
  return principal.roles.includes(role);
}

/** Whether the caller holds `role` or a role above it (Admin ⊇ Operator ⊇ Reader). */
export function hasRoleOrAbove(principal: Principal, role: AppRole): boolean {
  return rolesGranting(role).some((granting) => hasRole(principal, granting));
}

/** "Admin", "Operator or Admin", "Reader, Operator or Admin": as 403 details name them. */
export function describeRoles(roles: readonly string[]): string {
  if (roles.length <= 1) return roles.join("");
  return `${roles.slice(0, -1).join(", ")} or ${roles[roles.length - 1]}`;
}

/** Reads need an app role of this API or an accepted delegated scope: a valid token alone is not enough. */
export function hasReadAccess(principal: Principal): boolean {
  return principal.scopes.length > 0 || readRoles.some((role) => hasRole(principal, role));
}
