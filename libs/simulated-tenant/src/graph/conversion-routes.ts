import { Router } from "express";
import type { DirectoryUser } from "../model.ts";
import type { SimulatorContext } from "../simulator-context.ts";
import {
  bodyOf,
  contextUrl,
  operation,
  paramOf,
  sendBadRequest,
  sendInvalidValue,
  sendNotFound,
  sendObjectConflict,
  sendUnknownSegment,
  versionOf,
} from "./graph-responses.ts";
import { hasVerifiedDomain, isExternalUser, meetsPasswordComplexity, upnTakenBy } from "./user-shape.ts";

/**
 * Beta-only POST /users/{id}/convertExternalToInternalMemberUser: a B2B user becomes an internal
 * member (new UPN, own password for a cloud-only user), keeping its id. v1.0 callers get Graph's
 * unknown-segment 400; converting a user that is not external is a 400.
 */
export function conversionRoutes({ state }: SimulatorContext): Router {
  const router = Router();

  router.post("/users/:id/convertExternalToInternalMemberUser", (request, response) => {
    if (versionOf(request) !== "beta")
      return sendUnknownSegment(response, "convertExternalToInternalMemberUser");
    const user = state.findUser(paramOf(request, "id"), "primary");
    if (user === undefined) return sendNotFound(response, paramOf(request, "id"));
    if (!isExternalUser(user)) return sendBadRequest(response, "The user is not an external user.");
    const body = bodyOf(request);
    const cloudOnly = user.onPremisesImmutableId === null;
    const upn = typeof body.userPrincipalName === "string" ? body.userPrincipalName : undefined;
    const password = (body.passwordProfile as { password?: unknown } | undefined)?.password;
    // Documented: both are required for users whose authentication is managed in the cloud.
    if (cloudOnly && upn === undefined) return sendInvalidValue(response, "userPrincipalName", "User");
    if (cloudOnly && (typeof password !== "string" || !meetsPasswordComplexity(password))) {
      return sendInvalidValue(response, "passwordProfile", "User");
    }
    if (upn !== undefined && !hasVerifiedDomain(state, upn))
      return sendInvalidValue(response, "userPrincipalName", "User");
    if (upn !== undefined && upnTakenBy(state, upn, user.id) !== undefined) {
      return sendObjectConflict(response, "userPrincipalName");
    }
    const newUpn = upn ?? user.userPrincipalName;
    const converted: DirectoryUser = {
      ...user,
      userPrincipalName: newUpn,
      mail: typeof body.mail === "string" ? body.mail : user.mail,
      userType: "Member",
      externalUserState: null,
      identities: [{ signInType: "userPrincipalName", issuer: state.domains[0]!, issuerAssignedId: newUpn }],
    };
    state.users.put(converted);
    const convertedAt = state.isoNow();
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: user.userPrincipalName,
      detail: `converted to internal member (userPrincipalName=${newUpn}${cloudOnly ? ", passwordProfile set" : ""})`,
    });
    response.json({
      "@odata.context": contextUrl(request, "microsoft.graph.conversionUserDetails"),
      convertedToInternalUserDateTime: convertedAt,
      displayName: converted.displayName,
      mail: converted.mail,
      userPrincipalName: converted.userPrincipalName,
    });
  });

  return router;
}
