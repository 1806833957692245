import { graphErrorOf } from "../../tenant/graph-error-mapping.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { resolveMembershipTarget } from "./membership-target.ts";
import { directoryObjectReference, groupPath } from "./graph-paths.ts";
import { writeThroughReplicationLag } from "./replica-writes.ts";

const name = "Add-EntraGroupMember";

/**
 * Add-EntraGroupMember (Boolean): makes the user a direct member of the group.
 * Idempotent through Graph's own answer: adding an existing member is a 400 "One or more added
 * object references already exist", taken as done. Group or user missing (after the replication
 * grace) → NonRetriable graph.not_found naming GroupId or UserId. Both were just read, so a "does
 * not exist" answer to the add itself is replication lag (replica-writes.ts): sent again through
 * the grace, then retryable graph.replication_lag. A mail-enabled security group or distribution
 * list is refused by Graph: permanent graph.mail_enabled_group (Exchange Online manages those).
 */
export function addEntraGroupMember(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const { groupId, userId } = await resolveMembershipTarget(name, raw, context, settings);
    await writeThroughReplicationLag(
      name,
      async () => {
        try {
          await context.tenant.graph.request(
            {
              method: "POST",
              path: groupPath(groupId, "/members/$ref"),
              body: directoryObjectReference(context.tenant.graph, userId),
            },
            context.signal,
          );
        } catch (error) {
          if (!isAlreadyMember(error)) throw error;
        }
      },
      settings.replicationGraceMs,
      context.signal,
    );
    return true;
  };
}

function isAlreadyMember(error: unknown): boolean {
  const info = graphErrorOf(error);
  return (
    info !== undefined && info.status === 400 && /added object references already exist/i.test(info.message)
  );
}
