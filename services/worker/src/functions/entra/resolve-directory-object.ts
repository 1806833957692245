import { MatoolkitError, NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { GraphClient } from "../../tenant/graph-client.ts";
import type { WorkerFunctionContext } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { groupPath, userPath } from "./graph-paths.ts";
import { untilFound } from "./replication-grace.ts";

/**
 * Reads the users and groups a function's parameters name. Every user parameter accepts an
 * object id or a UPN (Graph's `/users/{id | userPrincipalName}` takes both). `find*` answers
 * undefined for 404; `resolve*` re-reads for the replication grace, then fails permanently with
 * `graph.not_found` naming the parameter (never its value).
 */
export interface GraphUser {
  readonly id: string;
  readonly userPrincipalName: string;
  readonly [property: string]: unknown;
}

export interface GraphGroup {
  readonly id: string;
  readonly displayName: string;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof MatoolkitError && error.reason === reasonCodes.graphNotFound;
}

export async function findUser(
  graph: GraphClient,
  idOrUpn: string,
  select: readonly string[],
  signal: AbortSignal,
  version: "v1.0" | "beta" = "v1.0",
): Promise<GraphUser | undefined> {
  const properties = [...new Set(["id", "userPrincipalName", ...select])].join(",");
  try {
    return await graph.request<GraphUser>(
      {
        method: "GET",
        ...(version === "beta" ? { version } : {}),
        path: userPath(idOrUpn),
        query: { $select: properties },
      },
      signal,
    );
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export async function findGroup(
  graph: GraphClient,
  groupId: string,
  signal: AbortSignal,
): Promise<GraphGroup | undefined> {
  try {
    return await graph.request<GraphGroup>(
      { method: "GET", path: groupPath(groupId), query: { $select: "id,displayName" } },
      signal,
    );
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export interface Named {
  /** e.g. `Add-EntraGroupMember`, for the error message. */
  readonly functionName: string;
  /** e.g. `UserId`: the parameter that named the object. */
  readonly parameter: string;
}

export async function resolveUser(
  context: WorkerFunctionContext,
  settings: EntraSettings,
  named: Named,
  idOrUpn: string,
  select: readonly string[] = [],
): Promise<GraphUser> {
  const { graph } = context.tenant;
  const user = await untilFound(
    () => findUser(graph, idOrUpn, select, context.signal),
    settings.replicationGraceMs,
    context.signal,
  );
  if (user === undefined) throw notFound(named, "user");
  return user;
}

export async function resolveGroup(
  context: WorkerFunctionContext,
  settings: EntraSettings,
  named: Named,
  groupId: string,
): Promise<GraphGroup> {
  const group = await untilFound(
    () => findGroup(context.tenant.graph, groupId, context.signal),
    settings.replicationGraceMs,
    context.signal,
  );
  if (group === undefined) throw notFound(named, "group");
  return group;
}

export function notFound(named: Named, kind: "user" | "group"): NonRetriableError {
  return new NonRetriableError(
    reasonCodes.graphNotFound,
    `${named.functionName}: the ${kind} named by ${named.parameter} does not exist`,
  );
}
