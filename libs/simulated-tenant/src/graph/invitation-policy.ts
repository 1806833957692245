import { Router } from "express";
import type { SimulatorContext } from "../simulator-context.ts";
import type { TenantState } from "../tenant-state.ts";
import { contextUrl } from "./graph-responses.ts";

/**
 * The tenant's B2B invitation setting, `authorizationPolicy.allowInvitesFrom`
 * (https://learn.microsoft.com/graph/api/resources/authorizationpolicy: none,
 * adminsAndGuestInviters, adminsGuestInvitersAndAllMembers, everyone; everyone is the default
 * outside US Government clouds). With `none` every invitation is refused, administrators' and
 * applications' included: 403 "Guest invitations not allowed for your company. Contact your
 * company administrator for more details." (cross-tenant synchronization troubleshooting,
 * https://learn.microsoft.com/entra/identity/multi-tenant-organizations/cross-tenant-synchronization-configure,
 * "Symptom - Users fail to provision with error AzureActiveDirectoryForbidden"; the 403 status in
 * MicrosoftDocs/azure-docs issue #78054). With `adminsAndGuestInviters` an app-only caller is
 * refused too: "Application permissions (app-only) do not work if B2B invitations are disabled on
 * the tenant or if B2B invitations are restricted to administrators"
 * (microsoftgraph/microsoft-graph-docs-contrib `api-reference/v1.0/api/invitation-post.md`; a
 * 2025 change, PR #9556, says app permissions now pass that restriction, so refusing is the
 * stricter reading). The worker is app-only and holds no directory role here, so both refuse it.
 * The error `code` is not documented; `Forbidden` is used.
 */
export const invitationsNotAllowedMessage =
  "Guest invitations not allowed for your company. Contact your company administrator for more details.";

export function invitationsRefused(state: TenantState): boolean {
  const setting = state.behaviours.allowInvitesFrom;
  return setting === "none" || setting === "adminsAndGuestInviters";
}

/** GET /policies/authorizationPolicy: the setting as Graph reports it (read-only here). */
export function authorizationPolicyRoutes({ state }: SimulatorContext): Router {
  const router = Router();
  router.get("/policies/authorizationPolicy", (request, response) => {
    response.json({
      "@odata.context": contextUrl(request, "policies/authorizationPolicy/$entity"),
      id: "authorizationPolicy",
      displayName: "Authorization Policy",
      allowInvitesFrom: state.behaviours.allowInvitesFrom,
    });
  });
  return router;
}
