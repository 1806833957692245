import { randomUUID } from "node:crypto";

/**
 * The error bodies of the real services, so clients parse simulated errors with the same code as
 * real ones.
 *
 * Graph (https://learn.microsoft.com/graph/errors): `{ error: { code, message, innerError } }`,
 * with `details` for some validation errors (e.g. ObjectConflict).
 */
export function graphErrorBody(
  code: string,
  message: string,
  details?: ReadonlyArray<{ code: string; message: string; target?: string }>,
): unknown {
  const requestId = randomUUID();
  return {
    error: {
      code,
      message,
      ...(details === undefined ? {} : { details }),
      innerError: { date: new Date().toISOString(), "request-id": requestId, "client-request-id": requestId },
    },
  };
}

/**
 * Exchange Online admin API (the REST endpoint behind ExchangeOnlineManagement v3), as the service
 * answers a failed cmdlet: `error.message` is the generic "Error executing cmdlet", and the
 * `<ErrorId>|<exception type>|<text>` string is only in `error.details[].message`; `innererror`
 * names the OData layer's own exception type, not the cmdlet's. A body captured from the service
 * in Microsoft365DSC/Microsoft365DSC issue #2998 (2023-03-14):
 * `{"error":{"code":"NotFound","message":"Error executing cmdlet","details":[{"code":"Context",
 * "target":"","message":"Ex6F9304|Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException|
 * The operation couldn't be performed because object '…' couldn't be found on '…'."}],
 * "innererror":{"message":"Error executing cmdlet","type":
 * "Microsoft.Exchange.Admin.OData.Core.ODataServiceException","stacktrace":"   at …"}}}`.
 * Clients that call the same endpoint read `details[].message` first for that reason:
 * GreyCorbel/ExoHelper `Commands/Internal/Get-ExoException.ps1`, KelvinTegelaar/CIPP-API
 * `Modules/CIPPCore/Public/GraphHelper/New-ExoRequest.ps1`.
 */
export function exchangeErrorBody(
  exceptionType: string,
  text: string,
  code = "InternalServerError",
): unknown {
  const errorId = `Ex${randomUUID().slice(0, 6).toUpperCase()}`;
  return {
    error: {
      code,
      message: genericExchangeErrorMessage,
      details: [{ code: "Context", target: "", message: `${errorId}|${exceptionType}|${text}` }],
      innererror: {
        message: genericExchangeErrorMessage,
        type: "Microsoft.Exchange.Admin.OData.Core.ODataServiceException",
        stacktrace: "",
      },
    },
  };
}

/** What the service puts in `error.message` (and `innererror.message`) for any cmdlet failure. */
export const genericExchangeErrorMessage = "Error executing cmdlet";
