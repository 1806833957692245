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
import { untilFound } from "./replication-grace.ts";

const name = "Convert-EntraB2BToInternal";
const params = z.object({
  UserId: userReference,
  UserPrincipalName: userPrincipalName.optional(),
  Mail: optionalText,
  Password: optionalText,
});
const select = [...externalUserProperties, "onPremisesImmutableId"];

/**
 * Convert-EntraB2BToInternal (Boolean): turns a B2B (external) user into an internal member,
 * keeping the object, id and memberships. Microsoft Graph offers this only in **beta**
 * (POST /beta/users/{id}/convertExternalToInternalMemberUser), so it may change without notice.
 * For a cloud-only user Graph requires a UPN and a passwordProfile: the UPN is UserPrincipalName
 * (or the current one), the password Password or a generated one (never returned or logged).
 * - Whether the user is external is decided by Graph, not by a read: a read may be stale, and an
 *   internal user looks the same before its B2B invitation has replicated as after its
 *   conversion. Skipping on "looks internal" converted nothing when the invitation was written a
 *   moment before (the end-to-end rehearsal caught it). So the conversion is always requested,
 *   and a refusal (400) counts as done when the user then reads as internal: Graph refuses to
 *   convert a user that is not external.
 * - UserId not found but UserPrincipalName names an internal user (a previous run converted and
 *   renamed it) → true.
 */
export function convertEntraB2BToInternal(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    const { graph } = context.tenant;
    const found = await untilFound<{ user?: GraphUser; done?: true }>(
      async () => {
        const user = await findUser(graph, p.UserId, select, context.signal);
        if (user !== undefined) return { user };
        if (p.UserPrincipalName === undefined) return undefined;
        const renamed = await findUser(graph, p.UserPrincipalName, select, context.signal);
        const same =
          renamed !== undefined &&
          (!isObjectId(p.UserId) || renamed.id.toLowerCase() === p.UserId.toLowerCase());
        return same && !isExternalUser(renamed) ? { done: true } : undefined;
      },
      settings.replicationGraceMs,
      context.signal,
    );
    if (found === undefined) throw notFound({ functionName: name, parameter: "UserId" }, "user");
    const user = found.user;
    if (user === undefined) return true;

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
      if (await becameInternal(user.id)) return true;
      throw error;
    }

    async function becameInternal(id: string): Promise<boolean> {
      const internal = await untilFound(
        async () => {
          const current = await findUser(graph, id, select, context.signal);
          return current !== undefined && !isExternalUser(current) ? true : undefined;
        },
        settings.replicationGraceMs,
        context.signal,
      );
      return internal === true;
    }
  };
}
