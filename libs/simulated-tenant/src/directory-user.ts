import type { DirectoryUser } from "./model.ts";
import type { TenantState } from "./tenant-state.ts";

/**
 * A new user as Entra ID creates one: an internal member signing in with its UPN, every optional
 * property empty. Creation paths (POST /users, a B2B guest, New-MailUser, seeding) override only
 * what they set, so a property added to the model gets its default in one place.
 */
export function newDirectoryUser(
  state: TenantState,
  required: Pick<DirectoryUser, "userPrincipalName" | "displayName"> & Partial<DirectoryUser>,
): DirectoryUser {
  const upn = required.userPrincipalName;
  return {
    id: state.newId(),
    mailNickname: upn.slice(0, upn.lastIndexOf("@")),
    mail: null,
    givenName: null,
    surname: null,
    userType: "Member",
    accountEnabled: true,
    externalUserState: null,
    identities: [{ signInType: "userPrincipalName", issuer: state.domains[0]!, issuerAssignedId: upn }],
    otherMails: [],
    proxyAddresses: [],
    businessPhones: [],
    department: null,
    jobTitle: null,
    companyName: null,
    usageLocation: null,
    employeeId: null,
    onPremisesImmutableId: null,
    onPremisesSyncEnabled: null,
    onPremisesUserPrincipalName: null,
    externalUserConvertedOn: null,
    assignedPlans: [],
    createdDateTime: state.isoNow(),
    ...required,
  };
}
