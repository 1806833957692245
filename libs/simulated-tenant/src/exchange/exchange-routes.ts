import { Router, type Request, type Response } from "express";
import { exchangeErrorBody } from "../error-bodies.ts";
import type { SimulatorContext } from "../simulator-context.ts";
import { CmdletError, exceptionTypes } from "./cmdlet-error.ts";
import { cmdletTable, type CmdletOutput } from "./cmdlet.ts";
import { distributionGroupCmdlets } from "./distribution-group-cmdlets.ts";
import { getUserCmdlet } from "./get-user-cmdlet.ts";
import { groupMemberCmdlets } from "./group-member-cmdlets.ts";
import { mailUserCmdlets } from "./mail-user-cmdlets.ts";
import { bindParameters } from "./parameter-binding.ts";
import { readRecipientCmdlets } from "./read-recipient-cmdlets.ts";
import { setRecipientCmdlets } from "./set-recipient-cmdlets.ts";

const cmdlets = cmdletTable(
  readRecipientCmdlets,
  setRecipientCmdlets,
  mailUserCmdlets,
  distributionGroupCmdlets,
  groupMemberCmdlets,
  [getUserCmdlet],
);

/** The page size when the client sends no `Prefer: odata.maxpagesize` (the service's cap too). */
const defaultPageSize = 1000;

/**
 * Exchange Online admin API of the simulated tenant: `POST /adminapi/{version}/{tenantId}/InvokeCommand`
 * with `{CmdletInput: {CmdletName, Parameters}}`, answered `{"@odata.context", value,
 * "@odata.nextLink"?, "@adminapi.warnings"?}` or an OData error `<ErrorId>|<exception type>|<text>`.
 * Pages honour `Prefer: odata.maxpagesize`; the next page is the same POST to nextLink.
 */
export function exchangeRoutes({ state }: SimulatorContext): Router {
  const router = Router();
  router.post("/:version/:tenantId/InvokeCommand", (request: Request, response: Response) => {
    const tenantId = String(request.params.tenantId).toLowerCase();
    if (
      tenantId !== state.tenantId.toLowerCase() &&
      !state.domains.some((domain) => domain.toLowerCase() === tenantId)
    ) {
      response
        .status(404)
        .json(
          exchangeErrorBody(
            "System.InvalidOperationException",
            "The tenant is not known to this service.",
            "NotFound",
          ),
        );
      return;
    }
    try {
      const input = (
        request.body as { CmdletInput?: { CmdletName?: unknown; Parameters?: unknown } } | undefined
      )?.CmdletInput;
      if (typeof input?.CmdletName !== "string" || input.CmdletName === "") {
        throw new CmdletError(400, "System.ArgumentException", "CmdletInput.CmdletName is required.");
      }
      const cmdlet = cmdlets.get(input.CmdletName.toLowerCase());
      if (cmdlet === undefined) {
        throw new CmdletError(
          400,
          exceptionTypes.commandNotFound,
          `The term '${input.CmdletName}' is not recognized as a name of a cmdlet, function, script file, or executable program.`,
        );
      }
      const output = cmdlet.run(bindParameters(cmdlet.parameters, input.Parameters), state);
      response.json(page(request, output));
    } catch (error) {
      if (!(error instanceof CmdletError)) throw error;
      response.status(error.status).json(exchangeErrorBody(error.exceptionType, error.message, error.code));
    }
  });
  return router;
}

function page(request: Request, output: CmdletOutput): Record<string, unknown> {
  const preference = /odata\.maxpagesize\s*=\s*(\d+)/i.exec(request.header("prefer") ?? "");
  const size = Math.min(defaultPageSize, Math.max(1, Number(preference?.[1] ?? defaultPageSize)));
  const skip = Math.max(0, Number.parseInt(String(request.query.$skiptoken ?? "0"), 10) || 0);
  const base = `${request.protocol}://${request.get("host")}${request.baseUrl}${request.path}`;
  const body: Record<string, unknown> = {
    "@odata.context": `${base.replace(/InvokeCommand$/, "")}$metadata#Collection(Exchange.GenericHashTable)`,
    value: output.value.slice(skip, skip + size),
  };
  if (skip + size < output.value.length) body["@odata.nextLink"] = `${base}?$skiptoken=${skip + size}`;
  if (skip === 0 && output.warnings !== undefined && output.warnings.length > 0)
    body["@adminapi.warnings"] = output.warnings;
  return body;
}
