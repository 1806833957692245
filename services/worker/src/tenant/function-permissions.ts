/**
 * What each standard function needs of the target tenant, as data: the one table that the
 * pre-flight check (tenant-check.ts) compares with the app's grants and that
 * docs/worker-and-tenant.md shows (function-permissions.test.ts keeps the page equal to
 * `renderPermissionsTable()`).
 *
 * Each Graph need is satisfied by any one of its permissions, least privileged first, as the
 * "Permissions" section of each operation's page lists them (application permissions):
 * - create/update user: https://learn.microsoft.com/graph/api/user-post-users,
 *   https://learn.microsoft.com/graph/api/user-update (User.ReadWrite.All; Directory.ReadWrite.All)
 * - read user: https://learn.microsoft.com/graph/api/user-get (User.Read.All; User.ReadWrite.All,
 *   Directory.Read.All, Directory.ReadWrite.All)
 * - add/remove member: https://learn.microsoft.com/graph/api/group-post-members,
 *   https://learn.microsoft.com/graph/api/group-delete-members (GroupMember.ReadWrite.All;
 *   Group.ReadWrite.All, Directory.ReadWrite.All)
 * - list members: https://learn.microsoft.com/graph/api/group-list-members (GroupMember.Read.All;
 *   Group.Read.All, Directory.Read.All, and their ReadWrite forms)
 * - invite: https://learn.microsoft.com/graph/api/invitation-post (User.Invite.All;
 *   User.ReadWrite.All, Directory.ReadWrite.All)
 * - convert: https://learn.microsoft.com/graph/api/user-convertexternaltointernalmemberuser
 *   (User-ConvertToInternal.ReadWrite.All; User.ReadWrite.All)
 * Exchange: the Office 365 Exchange Online application permission Exchange.ManageAsApp and an
 * Entra role on the app's service principal
 * (https://learn.microsoft.com/powershell/exchange/app-only-auth-powershell-v2). Issue 27 finding
 * 7: `Set-MailUser -ExchangeGuid/-ArchiveGuid` are reserved parameters, so the GUID function is
 * given Exchange Administrator rather than Exchange Recipient Administrator.
 */

export interface GraphPermissionNeed {
  /** Any one of these application permissions will do; the first is the least privileged. */
  readonly anyOf: readonly [string, ...string[]];
  readonly why: string;
}

export type ExchangeRole = "Exchange Recipient Administrator" | "Exchange Administrator";

export interface FunctionNeeds {
  readonly graph: readonly GraphPermissionNeed[];
  /** Exchange Online: Exchange.ManageAsApp plus this Entra role (or a broader one). */
  readonly exchangeRole?: ExchangeRole;
  /**
   * Params holding an address or UPN in the TARGET tenant, whose domain must be a verified domain
   * there. Addresses of the source tenant (an invitation's email, an external address) are not.
   */
  readonly targetDomainParams: readonly string[];
  /** Sends B2B invitations: the tenant's invitation policy must allow it. */
  readonly invitesGuests?: true;
}

const readUsers: GraphPermissionNeed = {
  anyOf: ["User.Read.All", "User.ReadWrite.All", "Directory.Read.All", "Directory.ReadWrite.All"],
  why: "read users",
};
const writeUsers: GraphPermissionNeed = {
  anyOf: ["User.ReadWrite.All", "Directory.ReadWrite.All"],
  why: "create and update users",
};
const readMembers: GraphPermissionNeed = {
  anyOf: [
    "GroupMember.Read.All",
    "GroupMember.ReadWrite.All",
    "Group.Read.All",
    "Group.ReadWrite.All",
    "Directory.Read.All",
    "Directory.ReadWrite.All",
  ],
  why: "read group memberships",
};
const writeMembers: GraphPermissionNeed = {
  anyOf: ["GroupMember.ReadWrite.All", "Group.ReadWrite.All", "Directory.ReadWrite.All"],
  why: "add and remove group members",
};
const invite: GraphPermissionNeed = {
  anyOf: ["User.Invite.All", "User.ReadWrite.All", "Directory.ReadWrite.All"],
  why: "send B2B invitations",
};
const convert: GraphPermissionNeed = {
  anyOf: ["User-ConvertToInternal.ReadWrite.All", "User.ReadWrite.All"],
  why: "convert external users to internal",
};

/** The 14 standard functions (services/worker/src/functions/{entra,exchange}/index.ts). */
export const standardFunctionNeeds = {
  "New-EntraUser": { graph: [writeUsers], targetDomainParams: ["UserPrincipalName"] },
  "Set-EntraUserUPN": { graph: [writeUsers], targetDomainParams: ["NewUserPrincipalName"] },
  "Add-EntraGroupMember": { graph: [readUsers, writeMembers], targetDomainParams: [] },
  "Remove-EntraGroupMember": { graph: [readUsers, writeMembers], targetDomainParams: [] },
  "New-EntraB2BInvitation": {
    graph: [readUsers, invite],
    targetDomainParams: [],
    invitesGuests: true,
  },
  "Convert-EntraB2BToInternal": { graph: [readUsers, convert], targetDomainParams: [] },
  "Test-EntraAttributeMatch": { graph: [readUsers], targetDomainParams: [] },
  "Test-EntraGroupMembership": { graph: [readUsers, readMembers], targetDomainParams: [] },
  "Add-ExchangeSecondaryEmail": {
    graph: [],
    exchangeRole: "Exchange Recipient Administrator",
    // A secondary address may deliberately keep the source domain: not checked.
    targetDomainParams: [],
  },
  "Set-ExchangePrimaryEmail": {
    graph: [],
    exchangeRole: "Exchange Recipient Administrator",
    targetDomainParams: ["PrimarySmtpAddress"],
  },
  "Set-ExchangeExternalAddress": {
    graph: [],
    exchangeRole: "Exchange Recipient Administrator",
    targetDomainParams: [],
  },
  "Set-ExchangeMailUserGuids": { graph: [], exchangeRole: "Exchange Administrator", targetDomainParams: [] },
  "Test-ExchangeAttributeMatch": {
    graph: [],
    exchangeRole: "Exchange Recipient Administrator",
    targetDomainParams: [],
  },
  "Test-ExchangeGroupMembership": {
    graph: [],
    exchangeRole: "Exchange Recipient Administrator",
    targetDomainParams: [],
  },
} as const satisfies Record<string, FunctionNeeds>;

export type StandardFunctionName = keyof typeof standardFunctionNeeds;

export function needsOf(name: string): FunctionNeeds | undefined {
  return Object.hasOwn(standardFunctionNeeds, name)
    ? (standardFunctionNeeds as Record<string, FunctionNeeds>)[name]
    : undefined;
}

/**
 * What the pre-flight check itself reads, each optional: without it, that line says which
 * permission to grant instead of an answer.
 * - the app's grants: https://learn.microsoft.com/graph/api/serviceprincipal-list-approleassignments
 *   (Application.Read.All; Application.ReadWrite.All, Directory.Read.All, Directory.ReadWrite.All)
 * - the invitation policy: https://learn.microsoft.com/graph/api/authorizationpolicy-get
 *   (Policy.Read.All; Policy.ReadWrite.Authorization)
 * - the domains: https://learn.microsoft.com/graph/api/domain-list (Domain.Read.All;
 *   Domain.ReadWrite.All, Directory.Read.All)
 */
export const checkReadNeeds = {
  grants: {
    anyOf: [
      "Application.Read.All",
      "Application.ReadWrite.All",
      "Directory.Read.All",
      "Directory.ReadWrite.All",
    ],
    why: "read the app's own granted permissions",
  },
  invitationPolicy: {
    anyOf: ["Policy.Read.All", "Policy.ReadWrite.Authorization"],
    why: "read the B2B invitation policy",
  },
  domains: {
    anyOf: ["Domain.Read.All", "Domain.ReadWrite.All", "Directory.Read.All", "Directory.ReadWrite.All"],
    why: "read the tenant's domains",
  },
} as const satisfies Record<string, GraphPermissionNeed>;

/** The Office 365 Exchange Online application permission every Exchange function needs. */
export const exchangeAppPermission = "Exchange.ManageAsApp";

/** The markdown table of docs/worker-and-tenant.md, built from the data above. */
export function renderPermissionsTable(): string {
  const rows: string[][] = [
    ["Function", "Microsoft Graph (application)", "Exchange Online", "Target-domain params"],
  ];
  for (const [name, needs] of Object.entries(standardFunctionNeeds) as [string, FunctionNeeds][]) {
    rows.push([
      `\`${name}\``,
      needs.graph.length === 0 ? "—" : needs.graph.map((need) => `\`${need.anyOf[0]}\``).join(", "),
      needs.exchangeRole === undefined ? "—" : `\`${exchangeAppPermission}\` + ${needs.exchangeRole}`,
      needs.targetDomainParams.length === 0
        ? "—"
        : needs.targetDomainParams.map((p) => `\`${p}\``).join(", "),
    ]);
  }
  rows.push([
    "`matoolkit tenant check` (optional)",
    Object.values(checkReadNeeds)
      .map((need) => `\`${need.anyOf[0]}\``)
      .join(", "),
    "a harmless read (`Get-OrganizationConfig`)",
    "—",
  ]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(" | ")} |`;
  return [
    line(rows[0]!),
    `| ${widths.map((width) => "-".repeat(width)).join(" | ")} |`,
    ...rows.slice(1).map(line),
  ].join("\n");
}
