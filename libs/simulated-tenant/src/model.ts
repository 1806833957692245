/**
 * The objects a simulated tenant holds, shaped like what Microsoft Graph (camelCase) and Exchange
 * Online cmdlets (PascalCase) return, so routes can serialise them with little mapping.
 */

/** A Graph `user` (the properties the standard functions read or write). */
export interface DirectoryUser {
  id: string;
  userPrincipalName: string;
  displayName: string;
  mailNickname: string;
  mail: string | null;
  givenName: string | null;
  surname: string | null;
  /** `Guest` for B2B guests; a B2B member collaborator is `Member` with an external identity. */
  userType: "Member" | "Guest";
  accountEnabled: boolean;
  /** Set once a B2B invitation was sent (`PendingAcceptance`) or redeemed (`Accepted`). */
  externalUserState: "PendingAcceptance" | "Accepted" | null;
  /** Sign-in identities; an external (B2B) user has one whose issuer is not this tenant. */
  identities: UserIdentity[];
  otherMails: string[];
  proxyAddresses: string[];
  /** Multi-valued like otherMails; Graph returns it by default (added for the Entra routes). */
  businessPhones: string[];
  department: string | null;
  jobTitle: string | null;
  companyName: string | null;
  usageLocation: string | null;
  employeeId: string | null;
  onPremisesImmutableId: string | null;
  /** true: synced from on-premises AD, which owns its attributes (graph/synced-user-rules.ts). */
  onPremisesSyncEnabled: boolean | null;
  /** Written by Entra Connect Sync's default rule; its presence blocks a B2B invitation (graph/b2b-prerequisites.ts). */
  onPremisesUserPrincipalName: string | null;
  /** Beta-only: stamped when the user was converted from external to internal (graph/conversion-routes.ts). */
  externalUserConvertedOn: string | null;
  /** The service plans licensed to the user; an enabled `exchange` plan provisions a mailbox (seed.ts). */
  assignedPlans: AssignedPlan[];
  createdDateTime: string;
}

/** A Graph `assignedPlan` (https://learn.microsoft.com/graph/api/resources/assignedplan). */
export interface AssignedPlan {
  assignedDateTime: string;
  capabilityStatus: "Enabled" | "Warning" | "Suspended" | "Deleted" | "LockedOut";
  /** e.g. `exchange`. */
  service: string;
  servicePlanId: string;
}

export interface UserIdentity {
  signInType: string;
  issuer: string;
  issuerAssignedId: string | null;
}

/** A Graph `group`; `members` holds directory object ids (users or groups). */
export interface DirectoryGroup {
  id: string;
  displayName: string;
  mailNickname: string;
  mail: string | null;
  description: string | null;
  groupTypes: string[];
  securityEnabled: boolean;
  mailEnabled: boolean;
  members: string[];
}

/** A Graph `invitation` (B2B), kept so a rehearsal shows which invitations would be sent. */
export interface Invitation {
  id: string;
  invitedUserId: string;
  invitedUserEmailAddress: string;
  inviteRedirectUrl: string;
  sendInvitationMessage: boolean;
  status: "PendingAcceptance" | "Completed";
  createdDateTime: string;
}

export type RecipientTypeDetails =
  | "UserMailbox"
  | "SharedMailbox"
  | "MailUser"
  | "MailUniversalDistributionGroup"
  | "MailUniversalSecurityGroup"
  | "GroupMailbox";

/**
 * An Exchange Online recipient as Get-Recipient / Get-Mailbox / Get-MailUser return it.
 * `EmailAddresses` uses Exchange's prefixes: `SMTP:` marks the primary, `smtp:` a secondary,
 * `X500:` a legacy DN. Groups list their members' `Guid`s in `Members`.
 */
export interface ExchangeRecipient {
  Guid: string;
  Identity: string;
  Name: string;
  Alias: string;
  DisplayName: string;
  RecipientTypeDetails: RecipientTypeDetails;
  PrimarySmtpAddress: string;
  WindowsEmailAddress: string;
  EmailAddresses: string[];
  ExternalEmailAddress: string | null;
  ExchangeGuid: string;
  ArchiveGuid: string;
  LegacyExchangeDN: string;
  ExternalDirectoryObjectId: string | null;
  EmailAddressPolicyEnabled: boolean;
  /** What Get-User shows: `UserMailbox` for a mail user that once had a mailbox (exchange/get-user-cmdlet.ts). */
  PreviousRecipientTypeDetails: string | null;
  Members: string[];
}

/** One write the simulated tenant accepted: what a rehearsal would have changed in a real one. */
export interface TenantChange {
  readonly sequence: number;
  readonly at: string;
  readonly api: "graph" | "exchange";
  /** e.g. `POST /v1.0/users` or `Set-MailUser`. */
  readonly operation: string;
  /** The object written (UPN, group name, recipient identity). */
  readonly target: string;
  /** What changed, in a few words (property names and new values). */
  readonly detail: string;
}

/** A mail the tenant accepted through Graph sendMail (graph/send-mail-routes.ts). */
export interface SentMail {
  /** The sending mailbox's UPN. */
  readonly from: string;
  readonly subject: string;
  readonly contentType: "text" | "html";
  readonly content: string;
  readonly to: readonly string[];
  readonly saveToSentItems: boolean;
  readonly at: string;
}
