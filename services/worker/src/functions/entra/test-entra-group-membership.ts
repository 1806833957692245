import { z } from "zod";
import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { GraphClient } from "../../tenant/graph-client.ts";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { flag, text, userReference } from "./entra-params.ts";
import { userPath } from "./graph-paths.ts";
import { untilHolds } from "./replication-grace.ts";
import { isNotFound, resolveGroup, resolveUser } from "./resolve-directory-object.ts";

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
 *
 * Runbooks run this right after the Add/Remove it verifies, and Graph may answer from a replica
 * that has not seen that write yet. So a wrong membership is re-checked within the replication
 * grace (as "not found" is; the grace counts from the first read) and reported only if it is
 * still wrong at the end: a match on any read returns at once, a genuine mismatch takes up to
 * the grace (default 10 s) to be reported. The wait is abortable (job timeout).
 */
export function testEntraGroupMembership(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const p = parseFunctionParams(name, params, raw);
    let ids: { groupId: string; userId: string } | undefined;
    let isMember = false;
    const check = async (): Promise<boolean> => {
      if (ids === undefined) {
        // First read: resolve both parameters (each re-read while not found), then check.
        const group = await resolveGroup(
          context,
          settings,
          { functionName: name, parameter: "GroupId" },
          p.GroupId,
        );
        const user = await resolveUser(
          context,
          settings,
          { functionName: name, parameter: "UserId" },
          p.UserId,
        );
        ids = { groupId: group.id, userId: user.id };
        isMember = await checkMember(context.tenant.graph, ids, context.signal);
      } else {
        // Re-reads: a replica answering 404 now says nothing new, so the last answer stands.
        isMember = await checkMember(context.tenant.graph, ids, context.signal).catch((error: unknown) => {
          if (isNotFound(error)) return isMember;
          throw error;
        });
      }
      return isMember === p.ShouldBeMember;
    };
    const match = await untilHolds(check, (holds) => holds, settings.replicationGraceMs, context.signal);
    if (!match && p.FailOnMismatch) {
      const expectation = p.ShouldBeMember
        ? "is not a member but should be"
        : "is a member but should not be";
      throw new NonRetriableError(reasonCodes.checkMembership, `${name}: the user ${expectation}`);
    }
    return { complete: true, data: { IsMember: isMember, Match: match } };
  };
}

async function checkMember(
  graph: GraphClient,
  ids: { groupId: string; userId: string },
  signal: AbortSignal,
): Promise<boolean> {
  const answer = await graph.request<{ value?: unknown }>(
    { method: "POST", path: userPath(ids.userId, "/checkMemberGroups"), body: { groupIds: [ids.groupId] } },
    signal,
  );
  const found = Array.isArray(answer?.value) ? answer.value : [];
  return found.some((id) => typeof id === "string" && id.toLowerCase() === ids.groupId.toLowerCase());
}
