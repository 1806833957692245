import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { graphErrorOf } from "../../tenant/graph-error-mapping.ts";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { userPrincipalName, userReference } from "./entra-params.ts";
import { isObjectId, userPath } from "./graph-paths.ts";
import { findUser, notFound, type GraphUser } from "./resolve-directory-object.ts";
import { untilFound } from "./replication-grace.ts";
import { writeThroughReplicationLag } from "./replica-writes.ts";

const name = "Set-EntraUserUPN";
const params = z.object({ UserId: userReference, NewUserPrincipalName: userPrincipalName });

/**
 * Set-EntraUserUPN (Boolean): renames a user.
 * - The user found → the PATCH is always sent, even when a read shows it already has that UPN: a
 *   read may be stale, and a rollback (staging → final, then at once final → staging) reads the
 *   staging UPN it asks for and would skip the write, leaving the user on the final UPN. Graph
 *   answers an unchanged value with 204 too, and its write path sees the latest state.
 * - UserId not found but NewUserPrincipalName exists (a previous run renamed it) → true. When
 *   UserId is an object id the found user must be that object; a UPN cannot be checked (Entra
 *   keeps no history of old UPNs), so it is taken as the renamed user.
 * - NewUserPrincipalName held by another user → NonRetriable graph.conflict (Graph's
 *   ObjectConflict on the PATCH; a read could still show a user who gave it up a moment ago).
 * - Neither found within the replication grace → graph.not_found.
 */
export function setEntraUserUpn(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const { UserId, NewUserPrincipalName } = parseFunctionParams(name, params, raw);
    const { graph } = context.tenant;
    const found = await untilFound<{ user?: GraphUser; done?: true }>(
      async () => {
        const user = await findUser(graph, UserId, [], context.signal);
        if (user !== undefined) return { user };
        const renamed = await findUser(graph, NewUserPrincipalName, [], context.signal);
        if (renamed !== undefined && (!isObjectId(UserId) || sameId(renamed.id, UserId)))
          return { done: true };
        return undefined;
      },
      settings.replicationGraceMs,
      context.signal,
    );
    if (found === undefined) throw notFound({ functionName: name, parameter: "UserId" }, "user");
    const user = found.user;
    if (user === undefined) return true;

    // No read-based "is the new UPN taken?" check: a read may still show a user who gave the UPN up
    // a moment ago. Graph's write path decides, and answers ObjectConflict when it is taken.
    // Read a moment ago, so a 404 on the write is replication lag (replica-writes.ts).
    await writeThroughReplicationLag(
      name,
      async () => {
        try {
          await graph.request(
            { method: "PATCH", path: userPath(user.id), body: { userPrincipalName: NewUserPrincipalName } },
            context.signal,
          );
        } catch (error) {
          if (graphErrorOf(error)?.details.some((detail) => detail.code === "ObjectConflict"))
            throw takenByAnother();
          throw error;
        }
      },
      settings.replicationGraceMs,
      context.signal,
    );
    return true;
  };
}

function sameId(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function takenByAnother(): NonRetriableError {
  return new NonRetriableError(
    reasonCodes.graphConflict,
    `${name}: NewUserPrincipalName is already used by another user`,
  );
}
