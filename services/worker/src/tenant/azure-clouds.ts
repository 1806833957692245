/**
 * The Microsoft clouds the worker can reach, and for each the endpoints that must change
 * together: the Entra ID authority that issues tokens, Microsoft Graph's service root and token
 * scope, and Exchange Online's admin API root and token resource. A token from one cloud is
 * refused by every other (https://learn.microsoft.com/graph/deployments, "Access tokens acquired
 * for a national cloud deployment are not interchangeable"), so the four are chosen by one name,
 * MATOOLKIT_AZURE_CLOUD, never set one by one.
 *
 * Names follow Azure's own cloud names (`az cloud list`: AzureCloud, AzureUSGovernment,
 * AzureChinaCloud), with AzureUSGovernmentDoD for Microsoft 365 DoD, which shares Azure US
 * Government's Entra ID but has its own Graph and Exchange Online hosts.
 */

export const azureCloudNames = [
  "AzureCloud",
  "AzureUSGovernment",
  "AzureUSGovernmentDoD",
  "AzureChinaCloud",
] as const;
export type AzureCloudName = (typeof azureCloudNames)[number];

export const defaultAzureCloud: AzureCloudName = "AzureCloud";

export interface AzureCloudEndpoints {
  /** Entra ID authority host for @azure/identity's `authorityHost`, no trailing slash. */
  readonly authorityHost: string;
  /** Graph service root: requests go to `{graphBaseUrl}/v1.0/...`; `@odata.id` references name it. */
  readonly graphBaseUrl: string;
  /** The `.default` scope of Graph app-only tokens (on the cloud's Graph host). */
  readonly graphScope: string;
  /** Exchange Online admin API root: `{exchangeBaseUrl}/adminapi/beta/{tenant}/InvokeCommand`. */
  readonly exchangeBaseUrl: string;
  /** The Office 365 Exchange Online resource the token is for; the scope is `{resource}/.default`. */
  readonly exchangeResource: string;
}

/**
 * Sources, checked 2026-11 (the worker has only ever called these against the simulated tenant):
 * - Authority hosts and Graph roots: Microsoft Graph national cloud deployments,
 *   https://learn.microsoft.com/graph/deployments (tables "App registration and token service
 *   root endpoints" and "Microsoft Graph and Graph Explorer service root endpoints"; GCC High uses
 *   graph.microsoft.us, DoD dod-graph.microsoft.us, both with login.microsoftonline.us). The same
 *   authority hosts are @azure/identity's AzureAuthorityHosts (AzurePublicCloud, AzureGovernment,
 *   AzureChina) in node_modules/@azure/identity/dist/esm/constants.js.
 * - Graph scopes: https://learn.microsoft.com/graph/sdks/national-clouds ("Any permission scope
 *   value (including the .default scope) that contains the Microsoft Graph domain MUST use the
 *   domain of the Microsoft Graph service root endpoint for the national cloud deployment").
 * - Exchange Online hosts: Connect-ExchangeOnline, -ConnectionUri / -ExchangeEnvironmentName
 *   (O365Default, O365USGovGCCHigh, O365USGovDoD, O365China),
 *   https://learn.microsoft.com/powershell/module/exchangepowershell/connect-exchangeonline
 *   (MicrosoftDocs/office-docs-powershell exchange/exchange-ps/ExchangePowerShell/Connect-ExchangeOnline.md):
 *   outlook.office365.com, outlook.office365.us, webmail.apps.mil (DoD), partner.outlook.cn.
 * - Exchange Online token resources: the same host as the endpoint in the public cloud, GCC High
 *   and China, as clients calling this admin API or EWS app-only use it: Microsoft's CSS-Exchange
 *   (microsoft/CSS-Exchange Shared/AzureFunctions/Get-CloudServiceEndpoint.ps1, scope
 *   `{ExchangeOnlineEndpoint}/.default` in Shared/EMailFunctions/Connect-EWSExchangeOnline.ps1) and
 *   CISA's ScubaGear (cisagov/ScubaGear PowerShell/ScubaGear/Modules/Providers/ProviderHelpers/
 *   EXORestHelper.psm1, which POSTs to `/adminapi/beta/{tenant}/InvokeCommand` directly).
 * - DoD: both sources above use outlook-dod.office365.us as endpoint and token resource, where
 *   Connect-ExchangeOnline's documented ConnectionUri is webmail.apps.mil; the Microsoft 365 DoD
 *   endpoints list names both hosts for Exchange Online (https://learn.microsoft.com/microsoft-365/enterprise/microsoft-365-u-s-government-dod-endpoints,
 *   row 1 "outlook-dod.office365.us, webmail.apps.mil"). The admin API root and the token resource
 *   follow the two clients that call this API in DoD; no Microsoft reference page states the
 *   admin API's DoD host, so this row is the least certain (see docs/national-clouds.md).
 */
export const azureClouds: Readonly<Record<AzureCloudName, AzureCloudEndpoints>> = {
  // https://learn.microsoft.com/graph/deployments (Azure global service; Microsoft Graph global
  // service; Microsoft 365 GCC uses these too); Connect-ExchangeOnline O365Default.
  AzureCloud: {
    authorityHost: "https://login.microsoftonline.com",
    graphBaseUrl: "https://graph.microsoft.com",
    graphScope: "https://graph.microsoft.com/.default",
    exchangeBaseUrl: "https://outlook.office365.com",
    exchangeResource: "https://outlook.office365.com",
  },
  // https://learn.microsoft.com/graph/deployments (Azure US Government; Microsoft Graph for US
  // Government L4, "GCC High environment, use ... https://graph.microsoft.us");
  // Connect-ExchangeOnline O365USGovGCCHigh, ConnectionUri https://outlook.office365.us/powershell-liveID.
  AzureUSGovernment: {
    authorityHost: "https://login.microsoftonline.us",
    graphBaseUrl: "https://graph.microsoft.us",
    graphScope: "https://graph.microsoft.us/.default",
    exchangeBaseUrl: "https://outlook.office365.us",
    exchangeResource: "https://outlook.office365.us",
  },
  // https://learn.microsoft.com/graph/deployments (Azure US Government; Microsoft Graph for US
  // Government L5 (DOD), "DoD environment, use ... https://dod-graph.microsoft.us");
  // Exchange: CSS-Exchange USGovernmentL5 and ScubaGear "dod" (see above).
  AzureUSGovernmentDoD: {
    authorityHost: "https://login.microsoftonline.us",
    graphBaseUrl: "https://dod-graph.microsoft.us",
    graphScope: "https://dod-graph.microsoft.us/.default",
    exchangeBaseUrl: "https://outlook-dod.office365.us",
    exchangeResource: "https://outlook-dod.office365.us",
  },
  // https://learn.microsoft.com/graph/deployments (Azure China operated by 21Vianet; Microsoft
  // Graph China operated by 21Vianet); Connect-ExchangeOnline O365China, ConnectionUri
  // https://partner.outlook.cn/PowerShell.
  AzureChinaCloud: {
    authorityHost: "https://login.chinacloudapi.cn",
    graphBaseUrl: "https://microsoftgraph.chinacloudapi.cn",
    graphScope: "https://microsoftgraph.chinacloudapi.cn/.default",
    exchangeBaseUrl: "https://partner.outlook.cn",
    exchangeResource: "https://partner.outlook.cn",
  },
};

/** The cloud's endpoints by its canonical name. */
export function azureCloud(name: AzureCloudName): AzureCloudEndpoints {
  return azureClouds[name];
}

/** A name as an operator may type it (case aside), or undefined when it is no cloud of the table. */
export function azureCloudNameOf(value: string): AzureCloudName | undefined {
  const wanted = value.trim().toLowerCase();
  return azureCloudNames.find((name) => name.toLowerCase() === wanted);
}
