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
 * Exchange Online admin API (the REST endpoint behind ExchangeOnlineManagement v3): an OData
 * error whose message is `<ErrorId>|<exception type>|<text>`, repeated in `details` and in
 * `innererror.internalexception`. Clients classify by the exception type.
 */
export function exchangeErrorBody(
  exceptionType: string,
  text: string,
  code = "InternalServerError",
): unknown {
  const errorId = `Ex${randomUUID().slice(0, 6).toUpperCase()}`;
  const message = `${errorId}|${exceptionType}|${text}`;
  return {
    error: {
      code,
      message,
      details: [{ code: "Context", target: "", message }],
      innererror: {
        message,
        type: "Microsoft.Exchange.Admin.OData.Core.ODataServiceException",
        internalexception: { message: text, type: exceptionType, stacktrace: "" },
      },
    },
  };
}
