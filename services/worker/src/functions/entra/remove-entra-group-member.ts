import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { text, userReference } from "./entra-params.ts";
import { groupPath } from "./graph-paths.ts";
import { isNotFound, resolveGroup, resolveUser } from "./resolve-directory-object.ts";

const name = "Remove-EntraGroupMember";
const params = z.object({ GroupId: text, UserId: userReference });

/**
 * Remove-EntraGroupMember (Boolean): removes the user's direct membership of the group.
 * Group and user are resolved first, so a 404 on the membership reference can only mean "not a
 * member" (Graph answers the same 404 for all three), which is the goal: true. Group or user
 * missing → NonRetriable graph.not_found naming GroupId or UserId.
 */
export function removeEntraGroupMember(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const { GroupId, UserId } = parseFunctionParams(name, params, raw);
    const group = await resolveGroup(
      context,
      settings,
      { functionName: name, parameter: "GroupId" },
      GroupId,
    );
    const user = await resolveUser(context, settings, { functionName: name, parameter: "UserId" }, UserId);
    try {
      await context.tenant.graph.request(
        { method: "DELETE", path: groupPath(group.id, `/members/${encodeURIComponent(user.id)}/$ref`) },
        context.signal,
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return true;
  };
}
