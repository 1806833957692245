/**
 * Graph paths with ids encoded: a UPN may hold `#` (guests' `#EXT#`), `'` or `+`, which would
 * otherwise end or corrupt the path.
 */
export function userPath(idOrUpn: string, suffix = ""): string {
  return `/users/${encodeURIComponent(idOrUpn)}${suffix}`;
}

export function groupPath(groupId: string, suffix = ""): string {
  return `/groups/${encodeURIComponent(groupId)}${suffix}`;
}

/** Object ids are GUIDs; anything else given for a user is a UPN. */
export function isObjectId(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/**
 * The body of a `POST .../$ref`: `{"@odata.id": "{serviceRoot}/v1.0/directoryObjects/{id}"}` on
 * the tenant's own cloud (https://learn.microsoft.com/graph/api/group-post-members, request body;
 * national clouds use their own Graph host, https://learn.microsoft.com/graph/deployments).
 */
export function directoryObjectReference(
  graph: { readonly serviceRoot: string },
  objectId: string,
): { "@odata.id": string } {
  return { "@odata.id": `${graph.serviceRoot}/v1.0/directoryObjects/${encodeURIComponent(objectId)}` };
}
