import { Router } from "express";
import type { SimulatorContext } from "../simulator-context.ts";
import type { TenantState } from "../tenant-state.ts";
import {
  bodyOf,
  contextUrl,
  operation,
  paramOf,
  sendBadRequest,
  sendNotFound,
  versionOf,
} from "./graph-responses.ts";
import { groupShape } from "./groups-routes.ts";
import { mailEnabledGroupMessage, membershipManagedByExchange } from "./group-write-rules.ts";
import { groupNotReplicatedMessage, unknownToWriteReplica } from "./write-replica.ts";
import { project, selectedProperties } from "./select.ts";
import { userShape } from "./user-shape.ts";

/**
 * Group membership: list direct members, add and remove a member by reference, and
 * `checkMemberGroups` (transitive, as Graph documents it). The error answers are Graph's: adding
 * an existing member is a 400 "already exist", removing a non-member a 404 on the reference.
 */
export function membershipRoutes({ state }: SimulatorContext): Router {
  const router = Router();

  router.get("/groups/:id/members", (request, response) => {
    const group = state.groups.get(paramOf(request, "id"));
    if (group === undefined) return sendNotFound(response, paramOf(request, "id"));
    const version = versionOf(request);
    const userProperties = selectedProperties(request, response, userShape, version);
    if (userProperties === undefined) return;
    const value = group.members.flatMap((memberId) => {
      const user = state.users.get(memberId);
      if (user !== undefined)
        return [{ "@odata.type": "#microsoft.graph.user", ...project(user, userProperties) }];
      const nested = state.groups.get(memberId);
      if (nested !== undefined) {
        return [{ "@odata.type": "#microsoft.graph.group", ...project(nested, groupShape.defaults) }];
      }
      return [];
    });
    response.json({ "@odata.context": contextUrl(request, "directoryObjects"), value });
  });

  router.post("/groups/:id/members/$ref", (request, response) => {
    const group = state.groups.get(paramOf(request, "id"), "primary");
    if (group === undefined) return sendNotFound(response, paramOf(request, "id"));
    if (membershipManagedByExchange(state, group)) return sendBadRequest(response, mailEnabledGroupMessage);
    if (unknownToWriteReplica(state, "group", group.id))
      return sendBadRequest(response, groupNotReplicatedMessage);
    const reference = bodyOf(request)["@odata.id"];
    const memberId =
      typeof reference === "string"
        ? /\/(?:directoryObjects|users|groups)\/([^/?#]+)$/.exec(reference)?.[1]
        : undefined;
    if (memberId === undefined) {
      return sendBadRequest(response, "Invalid object identifier in '@odata.id'.", undefined, "BadRequest");
    }
    const id = decodeURIComponent(memberId);
    const member = directoryObjectName(state, id);
    if (
      member === undefined ||
      unknownToWriteReplica(state, "user", id) ||
      unknownToWriteReplica(state, "group", id)
    )
      return sendNotFound(response, id);
    if (group.members.includes(id)) {
      return sendBadRequest(
        response,
        "One or more added object references already exist for the following modified properties: 'members'.",
      );
    }
    state.groups.put({ ...group, members: [...group.members, id] });
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: group.displayName,
      detail: `added member ${member}`,
    });
    response.status(204).end();
  });

  router.delete("/groups/:id/members/:memberId/$ref", (request, response) => {
    const group = state.groups.get(paramOf(request, "id"), "primary");
    if (group === undefined) return sendNotFound(response, paramOf(request, "id"));
    if (membershipManagedByExchange(state, group)) return sendBadRequest(response, mailEnabledGroupMessage);
    const memberId = paramOf(request, "memberId");
    if (!group.members.includes(memberId)) return sendNotFound(response, memberId);
    state.groups.put({ ...group, members: group.members.filter((member) => member !== memberId) });
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: group.displayName,
      detail: `removed member ${directoryObjectName(state, memberId) ?? memberId}`,
    });
    response.status(204).end();
  });

  router.post("/users/:id/checkMemberGroups", (request, response) => {
    const user = state.findUser(paramOf(request, "id"));
    if (user === undefined) return sendNotFound(response, paramOf(request, "id"));
    const groupIds = bodyOf(request).groupIds;
    if (!Array.isArray(groupIds) || groupIds.length > 20 || !groupIds.every((id) => typeof id === "string")) {
      return sendBadRequest(
        response,
        "Invalid value specified for property 'groupIds': a list of up to 20 group ids.",
      );
    }
    const value = (groupIds as string[]).filter((groupId) =>
      isTransitiveMember(state, groupId, user.id, new Set()),
    );
    response.json({ "@odata.context": contextUrl(request, "Collection(Edm.String)"), value });
  });

  return router;
}

/** A user's UPN or a group's name for the change log, or undefined when no such object exists. */
function directoryObjectName(state: TenantState, id: string): string | undefined {
  return state.users.get(id, "primary")?.userPrincipalName ?? state.groups.get(id, "primary")?.displayName;
}

/** Reads the replica, as Graph's membership queries do; `seen` guards against nesting cycles. */
function isTransitiveMember(
  state: TenantState,
  groupId: string,
  memberId: string,
  seen: Set<string>,
): boolean {
  if (seen.has(groupId)) return false;
  seen.add(groupId);
  const group = state.groups.get(groupId);
  if (group === undefined) return false;
  return (
    group.members.includes(memberId) ||
    group.members.some((nested) => isTransitiveMember(state, nested, memberId, seen))
  );
}
