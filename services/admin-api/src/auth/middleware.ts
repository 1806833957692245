import type { NextFunction, Request, RequestHandler, Response } from "express";
import { problemDetails, sendProblem } from "../http/problem-details.ts";
import {
  AuthError,
  describeRoles,
  hasReadAccess,
  hasRoleOrAbove,
  readRoles,
  rolesGranting,
} from "@matoolkit/auth";
import type { AppRole, Principal, TokenVerifier } from "@matoolkit/auth";

// RFC 6750 b64token: the only characters a bearer token may contain.
const bearerHeaderPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Verifies `Authorization: Bearer <jwt>` and stores the caller in `res.locals.principal`.
 * Responds itself on failure so no route ever runs for an unauthenticated request.
 */
export function authenticate(verifier: TokenVerifier): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get("authorization");
    if (header === undefined) {
      return sendAuthError(res, new AuthError("auth.unauthenticated", "A bearer token is required"));
    }
    const token = bearerHeaderPattern.exec(header)?.[1];
    if (token === undefined) {
      return sendAuthError(
        res,
        new AuthError("auth.unauthenticated", "The Authorization header must be 'Bearer <token>'"),
      );
    }
    try {
      res.locals.principal = await verifier.verify(token);
    } catch (error) {
      if (error instanceof AuthError) return sendAuthError(res, error);
      throw error;
    }
    next();
  };
}

/**
 * For every route (writes add {@link requireRole}): an app role of this API or an accepted
 * delegated scope. Entra gives any app of the tenant a role-less token for this API unless
 * assignment is required, so a valid token alone must not be enough to read.
 */
export const requireReadAccess: RequestHandler = (_req, res, next) => {
  const principal = findPrincipal(res);
  if (principal === undefined) return sendAuthError(res, notAuthenticated());
  if (!hasReadAccess(principal)) {
    const roles = describeRoles(readRoles);
    return sendAuthError(res, new AuthError("auth.forbidden", `This operation requires the ${roles} role`));
  }
  next();
};

/**
 * For write routes: `requireRole("Operator")` admits Operator and Admin, `requireRole("Admin")`
 * only Admin (roles include the ones below them). The 403 names every role that would be let in.
 * Must run after {@link authenticate}.
 */
export function requireRole(role: AppRole): RequestHandler {
  return (_req, res, next) => {
    const principal = findPrincipal(res);
    if (principal === undefined) return sendAuthError(res, notAuthenticated());
    if (!hasRoleOrAbove(principal, role)) {
      const roles = describeRoles(rolesGranting(role));
      return sendAuthError(res, new AuthError("auth.forbidden", `This operation requires the ${roles} role`));
    }
    next();
  };
}

/** The authenticated caller; throws if the route was mounted without {@link authenticate}. */
export function principalOf(res: Response): Principal {
  const principal = findPrincipal(res);
  if (principal === undefined) throw new Error("No principal: the route is not behind authenticate()");
  return principal;
}

function findPrincipal(res: Response): Principal | undefined {
  const value: unknown = res.locals.principal;
  return isPrincipal(value) ? value : undefined;
}

function isPrincipal(value: unknown): value is Principal {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<Record<keyof Principal, unknown>>;
  return (
    typeof candidate.subject === "string" &&
    typeof candidate.identity === "string" &&
    Array.isArray(candidate.roles) &&
    Array.isArray(candidate.scopes)
  );
}

function notAuthenticated(): AuthError {
  return new AuthError("auth.unauthenticated", "A bearer token is required");
}

/** Sends an RFC 9457 problem (http/problem-types.ts maps the code), with the RFC 6750 challenge on 401. */
export function sendAuthError(res: Response, error: AuthError): void {
  const problem = problemDetails(error.code, error.message);
  if (problem.status === 401) {
    // Messages are fixed strings without quotes, so they are safe inside the quoted parameter.
    res.set("WWW-Authenticate", `Bearer error="invalid_token", error_description="${error.message}"`);
  }
  sendProblem(res, problem);
}
