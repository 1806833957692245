/**
 * A cmdlet failure as Exchange Online reports it: an HTTP status, the .NET exception type that
 * clients classify by, and the text (which, as in the real service, names the objects involved).
 * The route turns it into `exchangeErrorBody`.
 */
export class CmdletError extends Error {
  override readonly name = "CmdletError";

  constructor(
    readonly status: number,
    readonly exceptionType: string,
    text: string,
    readonly code: string = status === 404 ? "NotFound" : "BadRequest",
  ) {
    super(text);
  }
}

export const exceptionTypes = {
  notFound: "Microsoft.Exchange.Configuration.Tasks.ManagementObjectNotFoundException",
  ambiguous: "Microsoft.Exchange.Configuration.Tasks.ManagementObjectAmbiguousException",
  parameterBinding: "System.Management.Automation.ParameterBindingException",
  commandNotFound: "System.Management.Automation.CommandNotFoundException",
  proxyAddressExists: "Microsoft.Exchange.Data.ProxyAddressExistsException",
  alreadyExists: "Microsoft.Exchange.Data.Directory.ADObjectAlreadyExistsException",
  dataValidation: "Microsoft.Exchange.Data.DataValidationException",
  memberAlreadyExists: "Microsoft.Exchange.Management.Tasks.MemberAlreadyExistsException",
  memberNotFound: "Microsoft.Exchange.Management.Tasks.MemberNotFoundException",
} as const;

/** `-Identity` resolved to nothing, worded as the real cmdlets word it. */
export function objectNotFound(identity: string): CmdletError {
  return new CmdletError(
    404,
    exceptionTypes.notFound,
    `The operation couldn't be performed because object '${identity}' couldn't be found on 'SIMULATED.PROD.OUTLOOK.COM'.`,
  );
}

export function proxyAddressExists(address: string, ownerName: string): CmdletError {
  return new CmdletError(
    400,
    exceptionTypes.proxyAddressExists,
    `The proxy address "${address}" is already being used by the proxy addresses or LegacyExchangeDN of "${ownerName}". Please choose another proxy address.`,
  );
}

export function invalidValue(text: string): CmdletError {
  return new CmdletError(400, exceptionTypes.dataValidation, text);
}
