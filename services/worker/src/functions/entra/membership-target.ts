import { z } from "zod";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunctionContext } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { text, userReference } from "./entra-params.ts";
import { resolveGroup, resolveUser } from "./resolve-directory-object.ts";

const membershipParams = z.object({ GroupId: text, UserId: userReference });

/**
 * The group and user of Add-/Remove-EntraGroupMember, both resolved (through the replication
 * grace) before the membership call: Graph answers a missing group, a missing user and a missing
 * membership alike, so only a resolved pair lets a function read Graph's answer as "already done".
 */
export async function resolveMembershipTarget(
  functionName: string,
  raw: Record<string, unknown>,
  context: WorkerFunctionContext,
  settings: EntraSettings,
): Promise<{ groupId: string; userId: string }> {
  const { GroupId, UserId } = parseFunctionParams(functionName, membershipParams, raw);
  const group = await resolveGroup(context, settings, { functionName, parameter: "GroupId" }, GroupId);
  const user = await resolveUser(context, settings, { functionName, parameter: "UserId" }, UserId);
  return { groupId: group.id, userId: user.id };
}
