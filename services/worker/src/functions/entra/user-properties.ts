/**
 * Graph `user` property names in Graph's casing (v1.0), so a runbook may write `Department` or
 * `proxyaddresses` and still get `$select=department,proxyAddresses`. A name not listed is sent as
 * written with its first letter lowered; Graph then answers 400 for a property it does not have.
 */
const knownUserProperties = [
  "id",
  "accountEnabled",
  "ageGroup",
  "businessPhones",
  "city",
  "companyName",
  "country",
  "createdDateTime",
  "creationType",
  "department",
  "displayName",
  "employeeHireDate",
  "employeeId",
  "employeeType",
  "externalUserState",
  "faxNumber",
  "givenName",
  "identities",
  "imAddresses",
  "jobTitle",
  "mail",
  "mailNickname",
  "mobilePhone",
  "officeLocation",
  "onPremisesDistinguishedName",
  "onPremisesDomainName",
  "onPremisesImmutableId",
  "onPremisesSamAccountName",
  "onPremisesSecurityIdentifier",
  "onPremisesSyncEnabled",
  "onPremisesUserPrincipalName",
  "otherMails",
  "postalCode",
  "preferredDataLocation",
  "preferredLanguage",
  "proxyAddresses",
  "showInAddressList",
  "state",
  "streetAddress",
  "surname",
  "usageLocation",
  "userPrincipalName",
  "userType",
] as const;

const byLowerCase = new Map<string, string>(knownUserProperties.map((name) => [name.toLowerCase(), name]));

export function graphUserPropertyName(name: string): string {
  const trimmed = name.trim();
  return byLowerCase.get(trimmed.toLowerCase()) ?? trimmed.charAt(0).toLowerCase() + trimmed.slice(1);
}
