import type { NextFunction, Request, Response } from "express";
import { graphErrorBody } from "../error-bodies.ts";
import type { TenantApp } from "../tenant-app.ts";

/**
 * Application permissions as Graph enforces them on an app-only token: an operation whose
 * permissions (any one of the listed, per the "Permissions" table of its page) the app was not
 * granted is answered 403 `Authorization_RequestDenied` "Insufficient privileges to complete the
 * operation." (https://learn.microsoft.com/graph/errors, 403 Forbidden; the code and text are what
 * Graph sends for a directory operation the token's roles do not cover). Only operations whose
 * permissions are cited here are gated; the rest answer whatever was granted.
 */
interface GatedOperation {
  readonly method: string;
  readonly path: RegExp;
  readonly anyOf: readonly string[];
  /** The refusal when it is not the directory's (default Authorization_RequestDenied). */
  readonly denied?: { readonly code: string; readonly message: string };
}

const userWrite = ["User.ReadWrite.All", "Directory.ReadWrite.All"];
const memberWrite = ["GroupMember.ReadWrite.All", "Group.ReadWrite.All", "Directory.ReadWrite.All"];

const gated: readonly GatedOperation[] = [
  // https://learn.microsoft.com/graph/api/user-post-users, user-update
  { method: "POST", path: /^\/users\/?$/u, anyOf: userWrite },
  { method: "PATCH", path: /^\/users\/[^/]+\/?$/u, anyOf: userWrite },
  // https://learn.microsoft.com/graph/api/invitation-post
  { method: "POST", path: /^\/invitations\/?$/u, anyOf: ["User.Invite.All", ...userWrite] },
  // https://learn.microsoft.com/graph/api/user-convertexternaltointernalmemberuser
  {
    method: "POST",
    path: /^\/users\/[^/]+\/convertExternalToInternalMemberUser\/?$/u,
    anyOf: ["User-ConvertToInternal.ReadWrite.All", "User.ReadWrite.All"],
  },
  // https://learn.microsoft.com/graph/api/group-post-members, group-delete-members
  { method: "POST", path: /^\/groups\/[^/]+\/members\/\$ref\/?$/u, anyOf: memberWrite },
  { method: "DELETE", path: /^\/groups\/[^/]+\/members\/[^/]+\/\$ref\/?$/u, anyOf: memberWrite },
  // https://learn.microsoft.com/graph/api/serviceprincipal-get, serviceprincipal-list-approleassignments
  {
    method: "GET",
    path: /^\/servicePrincipals[(/]/u,
    anyOf: [
      "Application.Read.All",
      "Application.ReadWrite.All",
      "Directory.Read.All",
      "Directory.ReadWrite.All",
    ],
  },
  // https://learn.microsoft.com/graph/api/authorizationpolicy-get
  {
    method: "GET",
    path: /^\/policies\/authorizationPolicy\/?$/u,
    anyOf: ["Policy.Read.All", "Policy.ReadWrite.Authorization"],
  },
  // https://learn.microsoft.com/graph/api/domain-list
  {
    method: "GET",
    path: /^\/domains\/?$/u,
    anyOf: ["Domain.Read.All", "Domain.ReadWrite.All", "Directory.Read.All", "Directory.ReadWrite.All"],
  },
  // https://learn.microsoft.com/en-us/graph/api/user-sendmail (application: Mail.Send). Mail is
  // Exchange's: its refusal is 403 ErrorAccessDenied, not the directory's code.
  {
    method: "POST",
    path: /^\/users\/[^/]+\/sendMail\/?$/u,
    anyOf: ["Mail.Send"],
    denied: { code: "ErrorAccessDenied", message: "Access is denied. Check credentials and try again." },
  },
];

export function appPermissionGate(app: TenantApp) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const path = decodeURIComponent(request.path);
    const operation = gated.find((entry) => entry.method === request.method && entry.path.test(path));
    if (operation !== undefined && !app.hasAnyGraphPermission(operation.anyOf)) {
      const denied = operation.denied ?? {
        code: "Authorization_RequestDenied",
        message: "Insufficient privileges to complete the operation.",
      };
      response.status(403).json(graphErrorBody(denied.code, denied.message));
      return;
    }
    next();
  };
}
