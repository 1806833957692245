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
 * "User is not eligible for conversion | 400 | The user authentication is already internal and is
 * not eligible for conversion." (Errors table of "Convert external users to internal users",
 * https://learn.microsoft.com/entra/identity/users/convert-external-users-internal, MicrosoftDocs/entra-docs
 * docs/identity/users/convert-external-users-internal.md). Its error body there is
 * `{"error": {"code": "badRequest", "message": …}}`.
 */
export const notEligibleForConversionMessage =
  "The user authentication is already internal and is not eligible for conversion.";

/**
 * Whether the conversion API accepts the user: "Only users configured with an authentication
 * method external to the host organization are eligible for conversion" (same page,
 * Requirements). A user whose invitation is still `PendingAcceptance` has not authenticated
 * externally yet: an invited internal user still signs in with its own credentials until it
 * redeems (invite-internal-users.md), so it is refused too (rule
 * `conversionRequiresExternalAuthentication`; off: any user `isExternalUser` recognises).
 */
function eligibleForConversion(
  rules: { conversionRequiresExternalAuthentication: boolean },
  user: DirectoryUser,
): boolean {
  if (!rules.conversionRequiresExternalAuthentication) return isExternalUser(user);
  return (
    user.externalUserState !== "PendingAcceptance" &&
    user.identities.some((identity) => identity.signInType === "federated")
  );
}

/**
 * Beta-only POST /users/{id}/convertExternalToInternalMemberUser: a B2B user becomes an internal
 * member (new UPN, own password for a cloud-only user), keeping its id, and is stamped with
 * `externalUserConvertedOn` ("The API updates the userType from guest to member and also stamps
 * the "externalUserConvertedOn" attribute", same page). v1.0 callers get Graph's unknown-segment
 * 400; a user not eligible is a 400.
 */
export function conversionRoutes({ state }: SimulatorContext): Router {
  const router = Router();

  router.post("/users/:id/convertExternalToInternalMemberUser", (request, response) => {
    if (versionOf(request) !== "beta")
      return sendUnknownSegment(response, "convertExternalToInternalMemberUser");
    const user = state.findUser(paramOf(request, "id"), "primary");
    if (user === undefined) return sendNotFound(response, paramOf(request, "id"));
    if (!eligibleForConversion(state.prerequisites, user))
      return sendBadRequest(response, notEligibleForConversionMessage, undefined, "badRequest");
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
      externalUserConvertedOn: state.isoNow(),
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
