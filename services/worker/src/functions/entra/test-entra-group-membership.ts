import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { flag, text, userReference } from "./entra-params.ts";
import { userPath } from "./graph-paths.ts";
import { resolveGroup, resolveUser } from "./resolve-directory-object.ts";

const name = "Test-EntraGroupMembership";
const params = z.object({
  GroupId: text,
  UserId: userReference,
  ShouldBeMember: flag.default(true),
  FailOnMismatch: flag.default(true),
});

/**
 * Test-EntraGroupMembership (Object, read-only): is the user a member of the group as expected?
 * Membership is **transitive**: POST /users/{id}/checkMemberGroups, documented as transitive, so
 * membership through a nested group counts. Data: `{ IsMember, Match }`. When Match is false it
 * throws NonRetriable check.membership unless FailOnMismatch is false. Group or user missing (after
 * the replication grace) → graph.not_found naming the parameter.
 */
export function testEntraGroupMembership(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    const group = await resolveGroup(
      context,
      settings,
      { functionName: name, parameter: "GroupId" },
      p.GroupId,
    );
    const user = await resolveUser(context, settings, { functionName: name, parameter: "UserId" }, p.UserId);
    const answer = await context.tenant.graph.request<{ value?: unknown }>(
      { method: "POST", path: userPath(user.id, "/checkMemberGroups"), body: { groupIds: [group.id] } },
      context.signal,
    );
    const ids = Array.isArray(answer?.value) ? answer.value : [];
    const isMember = ids.some((id) => typeof id === "string" && id.toLowerCase() === group.id.toLowerCase());
    const match = isMember === p.ShouldBeMember;
    if (!match && p.FailOnMismatch) {
      const expectation = p.ShouldBeMember
        ? "is not a member but should be"
        : "is a member but should not be";
      throw new NonRetriableError(reasonCodes.checkMembership, `${name}: the user ${expectation}`);
    }
    return { complete: true, data: { IsMember: isMember, Match: match } };
  };
}
