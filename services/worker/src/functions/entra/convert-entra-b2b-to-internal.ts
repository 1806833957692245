import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { graphErrorOf } from "../../tenant/graph-error-mapping.ts";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { optionalText, userPrincipalName, userReference } from "./entra-params.ts";
import { externalUserProperties, isExternalUser } from "./external-user.ts";
import { generatePassword } from "./generate-password.ts";
import { isObjectId, userPath } from "./graph-paths.ts";
import { findUser, notFound, type GraphUser } from "./resolve-directory-object.ts";
import { untilFound, untilHolds } from "./replication-grace.ts";

const name = "Convert-EntraB2BToInternal";
const params = z.object({
  UserId: userReference,
  UserPrincipalName: userPrincipalName.optional(),
  Mail: optionalText,
  Password: optionalText,
});
/** Read on beta: `externalUserConvertedOn` is a beta property (see isConverted). */
const select = [...externalUserProperties, "onPremisesImmutableId", "externalUserConvertedOn"];

/**
 * "Already converted", from the attribute the documentation names: the conversion "stamps the
 * "externalUserConvertedOn" attribute with a datetime value indicating when the user was
 * converted", and a converted user is recognised by "externalUserConvertedOn attribute presence"
 * ("Convert external users to internal users", https://learn.microsoft.com/entra/identity/users/convert-external-users-internal,
 * MicrosoftDocs/entra-docs docs/identity/users/convert-external-users-internal.md). An empty
 * externalUserState alone says nothing: an internal user that was never invited has none either.
 */
function isConverted(user: GraphUser): boolean {
  return typeof user.externalUserConvertedOn === "string" && user.externalUserConvertedOn !== "";
}

/**
 * An invitation not redeemed yet: the user does not authenticate externally (an invited internal
 * user keeps its own credentials until it accepts, invite-internal-users.md), and "Only users
 * configured with an authentication method external to the host organization are eligible for
 * conversion" (convert-external-users-internal.md, Requirements).
 */
function isPending(user: GraphUser): boolean {
  return user.externalUserState === "PendingAcceptance";
}

/**
 * Convert-EntraB2BToInternal (Boolean): turns a B2B (external) user into an internal member,
 * keeping the object, id and memberships. Microsoft Graph offers this only in **beta**
 * (POST /beta/users/{id}/convertExternalToInternalMemberUser), so it may change without notice.
 * For a cloud-only user Graph requires a UPN and a passwordProfile: the UPN is UserPrincipalName
 * (or the current one), the password Password or a generated one (never returned or logged).
 * Only externally authenticated users are converted (reads on beta, for externalUserConvertedOn):
 * - already converted (externalUserConvertedOn set) → true, nothing sent;
 * - invitation still PendingAcceptance (re-read for the replication grace: it may have been
 *   redeemed a moment ago) → entra.invitation_pending, permanent, nothing sent;
 * - otherwise the conversion is requested even when the read shows an internal user: a read may
 *   be stale, and Graph decides on its primary. A refusal (400) is then settled by a re-read:
 *   converted → true; pending → entra.invitation_pending; an internal user never converted →
 *   entra.not_externally_authenticated; an external user → the refusal itself (a bad UPN, say).
 * - UserId not found but UserPrincipalName names a converted user (a previous run converted and
 *   renamed it) → true.
 */
export function convertEntraB2BToInternal(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    const { graph } = context.tenant;
    const read = (idOrUpn: string) => findUser(graph, idOrUpn, select, context.signal, "beta");
    const found = await untilFound<{ user?: GraphUser; done?: true }>(
      async () => {
        const user = await read(p.UserId);
        if (user !== undefined) return { user };
        if (p.UserPrincipalName === undefined) return undefined;
        const renamed = await read(p.UserPrincipalName);
        const same =
          renamed !== undefined &&
          (!isObjectId(p.UserId) || renamed.id.toLowerCase() === p.UserId.toLowerCase());
        return same && isConverted(renamed) ? { done: true } : undefined;
      },
      settings.replicationGraceMs,
      context.signal,
    );
    if (found === undefined) throw notFound({ functionName: name, parameter: "UserId" }, "user");
    if (found.user === undefined) return true;
    const user = isPending(found.user)
      ? await untilHolds(
          () => read(found.user!.id).then((current) => current ?? found.user!),
          (current) => !isPending(current),
          settings.replicationGraceMs,
          context.signal,
        )
      : found.user;
    if (isConverted(user)) return true;
    if (isPending(user)) throw pending();

    const cloudOnly = user.onPremisesImmutableId === null || user.onPremisesImmutableId === undefined;
    const body = {
      ...(p.UserPrincipalName !== undefined || cloudOnly
        ? { userPrincipalName: p.UserPrincipalName ?? user.userPrincipalName }
        : {}),
      ...(p.Mail !== undefined ? { mail: p.Mail } : {}),
      ...(cloudOnly
        ? {
            passwordProfile: {
              password: p.Password ?? generatePassword(),
              forceChangePasswordNextSignIn: true,
            },
          }
        : {}),
    };
    try {
      await graph.request(
        {
          method: "POST",
          version: "beta",
          path: userPath(user.id, "/convertExternalToInternalMemberUser"),
          body,
        },
        context.signal,
      );
      return true;
    } catch (error) {
      const info = graphErrorOf(error);
      if (info?.status !== 400) throw error;
      if (info.details.some((detail) => detail.code === "ObjectConflict")) {
        throw new NonRetriableError(
          reasonCodes.graphConflict,
          `${name}: UserPrincipalName is already used by another user`,
        );
      }
      const settled = await untilHolds(
        () => read(user.id),
        (current) => current === undefined || isConverted(current) || isPending(current),
        settings.replicationGraceMs,
        context.signal,
      );
      if (settled === undefined) throw error;
      if (isConverted(settled)) return true;
      if (isPending(settled)) throw pending();
      if (!isExternalUser(settled)) {
        throw new NonRetriableError(
          reasonCodes.entraNotExternallyAuthenticated,
          `${name}: the user authenticates with this tenant and was never converted (no external identity, no externalUserConvertedOn); only externally authenticated users can be converted`,
          { cause: error },
        );
      }
      throw error;
    }
  };
}

function pending(): NonRetriableError {
  return new NonRetriableError(
    reasonCodes.entraInvitationPending,
    `${name}: the user's B2B invitation is still pending (externalUserState PendingAcceptance): until they redeem it they do not sign in externally, and only externally authenticated users can be converted`,
  );
}
