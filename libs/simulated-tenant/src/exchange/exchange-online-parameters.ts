import type { ParameterSpec } from "./parameter-binding.ts";

/**
 * The parameters Exchange Online binds, per cmdlet the simulator implements: those whose
 * "Applicable:" line names Exchange Online on the cmdlet's page in MicrosoftDocs/office-docs-powershell
 * (`exchange/exchange-ps/ExchangePowerShell/<cmdlet>.md`), limited to the ones simulated here.
 * Anything else is refused by binding (`parameter-binding.ts`) with the ParameterBindingException
 * "A parameter cannot be found that matches parameter name '<name>'.", as Exchange Online refuses
 * a parameter it does not have (outlook.office365.com answers quoted in MicrosoftDocs/OfficeDocs-Exchange
 * issue #2397, Set-User -AuthenticationPolicy, and MicrosoftDocs/office-docs-powershell issue #9985).
 */
const identity: ParameterSpec = { kind: "string", mandatory: true };
const read: Readonly<Record<string, ParameterSpec>> = {
  Identity: { kind: "string" },
  ResultSize: { kind: "resultSize" },
};
const confirm: ParameterSpec = { kind: "switch" };
const bypass: ParameterSpec = { kind: "switch" };
/** Set-Mailbox and Set-MailUser share these (both pages: Applicable … Exchange Online). */
const setRecipient: Readonly<Record<string, ParameterSpec>> = {
  Identity: identity,
  EmailAddresses: { kind: "multi" },
  WindowsEmailAddress: { kind: "string" },
  DisplayName: { kind: "string" },
  Confirm: confirm,
};

export const exchangeOnlineParameters: Readonly<Record<string, Readonly<Record<string, ParameterSpec>>>> = {
  "Get-Recipient": read,
  "Get-Mailbox": read,
  "Get-MailUser": read,
  "Get-User": read,
  "Get-DistributionGroup": read,
  "Get-DistributionGroupMember": { Identity: identity, ResultSize: { kind: "resultSize" } },
  "Set-Mailbox": { ...setRecipient, Force: { kind: "switch" } },
  "Set-MailUser": {
    ...setRecipient,
    // "This parameter is functional only in on-premises Exchange" (Set-MailUser.md): it binds in
    // Exchange Online and changes nothing (set-recipient-cmdlets.ts ignores it).
    PrimarySmtpAddress: { kind: "string" },
    ExternalEmailAddress: { kind: "string" },
    ExchangeGuid: { kind: "guid" },
    ArchiveGuid: { kind: "guid" },
  },
  "New-MailUser": {
    Name: identity,
    ExternalEmailAddress: { kind: "string", mandatory: true },
    Alias: { kind: "string" },
    DisplayName: { kind: "string" },
    FirstName: { kind: "string" },
    LastName: { kind: "string" },
    // Documented "functional only in on-premises Exchange" too; honoured here because the contract
    // fixtures create their mail users with it (kinder than the service: README, simulator only).
    PrimarySmtpAddress: { kind: "string" },
  },
  "Remove-MailUser": { Identity: identity, Confirm: confirm },
  "New-DistributionGroup": {
    Name: identity,
    Alias: { kind: "string" },
    DisplayName: { kind: "string" },
    PrimarySmtpAddress: { kind: "string" },
    Type: { kind: "string" },
    Members: { kind: "multi" },
  },
  "Remove-DistributionGroup": {
    Identity: identity,
    BypassSecurityGroupManagerCheck: bypass,
    Confirm: confirm,
  },
  "Add-DistributionGroupMember": {
    Identity: identity,
    Member: { kind: "string", mandatory: true },
    BypassSecurityGroupManagerCheck: bypass,
    Confirm: confirm,
  },
  "Remove-DistributionGroupMember": {
    Identity: identity,
    Member: { kind: "string", mandatory: true },
    BypassSecurityGroupManagerCheck: bypass,
    Confirm: confirm,
  },
};

/**
 * Parameters of the cmdlets the standard functions call that the same pages document as "This
 * parameter is available only in on-premises Exchange." (Applicable: Exchange Server only), the
 * ones a migration tool is tempted to send. They are absent from the table above, so Exchange
 * Online's binding error answers them; the tests send each one.
 */
export const onPremisesOnlyParameters: Readonly<Record<string, readonly string[]>> = {
  // Set-Mailbox.md: -EmailAddressPolicyEnabled, -PrimarySmtpAddress.
  "Set-Mailbox": ["EmailAddressPolicyEnabled", "PrimarySmtpAddress"],
  // Set-MailUser.md: -EmailAddressPolicyEnabled.
  "Set-MailUser": ["EmailAddressPolicyEnabled"],
};

/** The declared parameters of `cmdlet`; a cmdlet missing from the table is a simulator bug. */
export function parametersOf(cmdlet: string): Readonly<Record<string, ParameterSpec>> {
  const parameters = exchangeOnlineParameters[cmdlet];
  if (parameters === undefined) throw new Error(`No Exchange Online parameter table for ${cmdlet}`);
  return parameters;
}
