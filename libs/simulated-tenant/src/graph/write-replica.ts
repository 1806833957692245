import type { TenantState } from "../tenant-state.ts";

/**
 * Writes that refer to other directory objects do not always resolve on a replica that has seen
 * them: an object created seconds ago can be unknown to the replica that takes the write, so
 * adding a user created a moment ago to a group answers 404 Request_ResourceNotFound for a while
 * ("the application gets a 404 ( not found ) for that id ... the PATCH request went to a
 * different node where the id did not yet exist":
 * https://blogs.aaddevsup.xyz/2021/08/why-do-i-sometimes-get-a-404-when-trying-to-update-an-azure-directory-object-after-i-just-created-it/;
 * "A newly created object to return a 'Not Found'":
 * https://devblogs.microsoft.com/identity/designing-for-eventual-consistency-for-microsoft-entra/).
 * For a group created a moment ago, the Add member page documents a 400 instead: "requests to add
 * members to the group might return a 400 Bad Request error with the message: 'The source
 * resource object or one of the objects being referenced do not exist.'"
 * (https://learn.microsoft.com/graph/api/group-post-members, note on replication delays).
 *
 * `state.writeLagMs` (behaviour `writeLagMs`, default the replication delay) is how long a new
 * object stays unknown so; 0 switches it off.
 */
export function unknownToWriteReplica(state: TenantState, kind: "user" | "group", id: string): boolean {
  const lag = state.writeLagMs;
  if (lag <= 0) return false;
  const createdAt = (kind === "user" ? state.users : state.groups).createdAt(id);
  return createdAt !== undefined && createdAt > state.now() - lag;
}

/** The Add member page's wording for a group the write replica has not seen yet. */
export const groupNotReplicatedMessage =
  "The source resource object or one of the objects being referenced do not exist.";
