import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { resolveMembershipTarget } from "./membership-target.ts";
import { groupPath } from "./graph-paths.ts";
import { isNotFound } from "./resolve-directory-object.ts";

const name = "Remove-EntraGroupMember";

/**
 * Remove-EntraGroupMember (Boolean): removes the user's direct membership of the group.
 * Group and user are resolved first, so a 404 on the membership reference can only mean "not a
 * member" (Graph answers the same 404 for all three), which is the goal: true. Group or user
 * missing → NonRetriable graph.not_found naming GroupId or UserId.
 */
export function removeEntraGroupMember(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const { groupId, userId } = await resolveMembershipTarget(name, raw, context, settings);
    try {
      await context.tenant.graph.request(
        { method: "DELETE", path: groupPath(groupId, `/members/${encodeURIComponent(userId)}/$ref`) },
        context.signal,
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return true;
  };
}
