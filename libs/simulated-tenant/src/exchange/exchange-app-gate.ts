import { Router, type NextFunction, type Request, type Response } from "express";
import { exchangeErrorBody } from "../error-bodies.ts";
import type { SimulatorContext } from "../simulator-context.ts";
import { stableGuid } from "../tenant-app.ts";

/**
 * Runs before the cmdlets (exchange-routes.ts):
 * - An app without `Exchange.ManageAsApp` or without an Exchange role is refused every cmdlet with
 *   HTTP 401 `{"error":{"code":"Unauthorized","message":"User is not allowed to call <cmdlet>",
 *   "innererror":{…ODataServiceException}}}`: the answer of the REST endpoint quoted in
 *   MicrosoftDocs/office-docs-powershell issue #7970 (app-only, role not one Exchange honours).
 *   Exchange decides by RBAC which cmdlets an app may run
 *   (https://learn.microsoft.com/powershell/exchange/app-only-auth-powershell-v2, "Assign Microsoft
 *   Entra roles to the application").
 * - `Get-OrganizationConfig` (no parameters), the harmless read the pre-flight check uses
 *   (https://learn.microsoft.com/powershell/module/exchange/get-organizationconfig): the
 *   organization's name and ids only.
 */
export function exchangeAppGate({ state, app }: SimulatorContext): Router {
  const router = Router();
  router.post(
    "/:version/:tenantId/InvokeCommand",
    (request: Request, response: Response, next: NextFunction) => {
      const tenantId = String(request.params.tenantId).toLowerCase();
      const known =
        tenantId === state.tenantId.toLowerCase() ||
        state.domains.some((domain) => domain.toLowerCase() === tenantId);
      const cmdlet = (request.body as { CmdletInput?: { CmdletName?: unknown } } | undefined)?.CmdletInput
        ?.CmdletName;
      if (!known || typeof cmdlet !== "string" || cmdlet === "") {
        next();
        return;
      }
      if (!app.exchangeManageAsApp || app.exchangeRole === null) {
        const message = `User is not allowed to call ${cmdlet}`;
        response.status(401).json({
          error: {
            code: "Unauthorized",
            message,
            innererror: { message, type: "Microsoft.Exchange.Admin.OData.Core.ODataServiceException" },
          },
        });
        return;
      }
      if (cmdlet.toLowerCase() !== "get-organizationconfig") {
        next();
        return;
      }
      const parameters = (request.body as { CmdletInput: { Parameters?: unknown } }).CmdletInput.Parameters;
      const names = parameters !== null && typeof parameters === "object" ? Object.keys(parameters) : [];
      if (names.length > 0) {
        response
          .status(400)
          .json(
            exchangeErrorBody(
              "System.Management.Automation.ParameterBindingException",
              `A parameter cannot be found that matches parameter name '${names[0]}'.`,
              "BadRequest",
            ),
          );
        return;
      }
      const name = state.domains[0]!;
      response.json({
        "@odata.context": `${request.protocol}://${request.get("host")}${request.baseUrl}/${request.params.version}/${request.params.tenantId}/$metadata#Collection(Exchange.GenericHashTable)`,
        value: [
          {
            Name: name,
            DisplayName: name.split(".")[0],
            Identity: name,
            Guid: stableGuid("organization", state.tenantId),
            IsDehydrated: false,
          },
        ],
      });
    },
  );
  return router;
}
