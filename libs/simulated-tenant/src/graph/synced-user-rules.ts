import type { DirectoryUser } from "../model.ts";
import type { TenantState } from "../tenant-state.ts";

/**
 * A user synced from on-premises Active Directory (`onPremisesSyncEnabled: true`) has on-premises
 * AD as its source of authority: Graph refuses to change the attributes the sync owns with 400
 * Request_BadRequest "Unable to update the specified properties for on-premises mastered Directory
 * Sync objects or objects currently undergoing migration." (microsoftgraph/microsoft-graph-docs
 * issue #18038 and issue #7301, the latter for a password reset). The attributes are those Entra
 * Connect Sync writes (https://learn.microsoft.com/entra/identity/hybrid/connect/reference-connect-sync-attributes-synchronized):
 * every property the simulated tenant lets a PATCH write, and the password (no password
 * writeback is modelled). `usageLocation` stays writable in the cloud: it is set there for
 * licensing. Behaviour `syncedUserWrites` (default `refused`).
 */
export const onPremisesMasteredMessage =
  "Unable to update the specified properties for on-premises mastered Directory Sync objects or objects currently undergoing migration.";

const cloudWritable: ReadonlySet<string> = new Set(["usageLocation"]);

/** Would this PATCH change an attribute on-premises AD owns? */
export function refusesSyncedWrite(
  state: TenantState,
  user: DirectoryUser,
  properties: Readonly<Record<string, unknown>>,
  passwordSet: boolean,
): boolean {
  if (state.behaviours.syncedUserWrites !== "refused" || user.onPremisesSyncEnabled !== true) return false;
  return passwordSet || Object.keys(properties).some((name) => !cloudWritable.has(name));
}
