import { createHash } from "node:crypto";
import { z } from "zod";
import { allowInvitesFromValues, type AllowInvitesFrom } from "./behaviours.ts";
import type { TenantState } from "./tenant-state.ts";

/**
 * The worker's app registration as the simulated tenant knows it: its service principal, the
 * application permissions granted to it (app role assignments on the Microsoft Graph and Office
 * 365 Exchange Online service principals), its Exchange role, and the tenant settings the
 * pre-flight check reads (the B2B invitation policy, domains not yet verified). Tests remove a
 * grant or the role (seed `app`, `PUT /_simulator/app`, or `simulator.app` in process) to see
 * the check and the functions fail as against a real tenant.
 */

/** Application (client) id of the simulated worker app: what a worker on the simulator signs in as. */
export const simulatedWorkerAppId = "3c1f7e2a-9b4d-4f6e-8a2c-5d7e9f1a3b5c";
/** Well-known appIds of the resource service principals every tenant has. */
export const microsoftGraphAppId = "00000003-0000-0000-c000-000000000000";
export const exchangeOnlineAppId = "00000002-0000-0ff1-ce00-000000000000";

/** The Graph application permissions (appRoles) the simulator's Graph service principal offers. */
export const simulatedGraphAppRoles = [
  "User.Read.All",
  "User.ReadWrite.All",
  "User.Invite.All",
  "User-ConvertToInternal.ReadWrite.All",
  "GroupMember.Read.All",
  "GroupMember.ReadWrite.All",
  "Group.Read.All",
  "Group.ReadWrite.All",
  "Directory.Read.All",
  "Directory.ReadWrite.All",
  "Application.Read.All",
  "Application.ReadWrite.All",
  "Policy.Read.All",
  "Policy.ReadWrite.Authorization",
  "Domain.Read.All",
  "Domain.ReadWrite.All",
  "Mail.Send",
] as const;

/** What a worker app is granted by default: what the standard functions and the check need. */
export const defaultGraphGrants: readonly string[] = [
  "User.ReadWrite.All",
  "User.Invite.All",
  "User-ConvertToInternal.ReadWrite.All",
  "GroupMember.ReadWrite.All",
  "Application.Read.All",
  "Policy.Read.All",
  "Domain.Read.All",
  // Email notifications (MATOOLKIT_NOTIFY_EMAIL, issue 31 item 7) send through this app.
  "Mail.Send",
];

export const exchangeRoles = ["Exchange Administrator", "Exchange Recipient Administrator"] as const;

export const tenantAppSettingsSchema = z.strictObject({
  /** Granted Graph application permissions (replaces the list). */
  graphPermissions: z.array(z.enum(simulatedGraphAppRoles)).optional(),
  /** Exchange.ManageAsApp granted on Office 365 Exchange Online. */
  exchangeManageAsApp: z.boolean().optional(),
  /** The Entra role of the app's service principal that Exchange honours; null: none. */
  exchangeRole: z.enum(exchangeRoles).nullable().optional(),
  allowInvitesFrom: z.enum(allowInvitesFromValues).optional(),
  /** Domains added to the tenant but not verified (GET /domains answers isVerified false). */
  unverifiedDomains: z.array(z.string().min(3)).optional(),
});
export type TenantAppSettings = z.infer<typeof tenantAppSettingsSchema>;

export class TenantApp {
  readonly appId = simulatedWorkerAppId;
  readonly servicePrincipalId = stableGuid("sp", simulatedWorkerAppId);
  graphPermissions = new Set<string>(defaultGraphGrants);
  exchangeManageAsApp = true;
  exchangeRole: (typeof exchangeRoles)[number] | null = "Exchange Administrator";
  unverifiedDomains: string[] = [];
  readonly #state: TenantState;
  /** What reset() restores: the tenant's setting when the simulator started (its profile's). */
  readonly #initialAllowInvitesFrom: AllowInvitesFrom;

  constructor(state: TenantState) {
    this.#state = state;
    this.#initialAllowInvitesFrom = state.behaviours.allowInvitesFrom;
  }

  /**
   * The tenant's B2B invitation setting: the `allowInvitesFrom` behaviour (behaviours.ts), which
   * GET /policies/authorizationPolicy answers and invitations obey; set here or by the behaviours.
   */
  get allowInvitesFrom(): AllowInvitesFrom {
    return this.#state.behaviours.allowInvitesFrom;
  }

  set allowInvitesFrom(value: AllowInvitesFrom) {
    this.#state.behaviours = { ...this.#state.behaviours, allowInvitesFrom: value };
  }

  apply(settings: TenantAppSettings): void {
    if (settings.graphPermissions !== undefined) this.graphPermissions = new Set(settings.graphPermissions);
    if (settings.exchangeManageAsApp !== undefined) this.exchangeManageAsApp = settings.exchangeManageAsApp;
    if (settings.exchangeRole !== undefined) this.exchangeRole = settings.exchangeRole;
    if (settings.allowInvitesFrom !== undefined) this.allowInvitesFrom = settings.allowInvitesFrom;
    if (settings.unverifiedDomains !== undefined) this.unverifiedDomains = [...settings.unverifiedDomains];
  }

  /** Removes one granted Graph permission (a test's "an admin revoked it"). */
  revokeGraphPermission(permission: string): void {
    this.graphPermissions.delete(permission);
  }

  reset(): void {
    this.graphPermissions = new Set<string>(defaultGraphGrants);
    this.exchangeManageAsApp = true;
    this.exchangeRole = "Exchange Administrator";
    this.allowInvitesFrom = this.#initialAllowInvitesFrom;
    this.unverifiedDomains = [];
  }

  /** True when any of `permissions` is granted. */
  hasAnyGraphPermission(permissions: readonly string[]): boolean {
    return permissions.some((permission) => this.graphPermissions.has(permission));
  }

  settings(): Required<TenantAppSettings> & { appId: string } {
    return {
      appId: this.appId,
      graphPermissions: [...this.graphPermissions] as (typeof simulatedGraphAppRoles)[number][],
      exchangeManageAsApp: this.exchangeManageAsApp,
      exchangeRole: this.exchangeRole,
      allowInvitesFrom: this.allowInvitesFrom,
      unverifiedDomains: [...this.unverifiedDomains],
    };
  }
}

/**
 * Ids are the simulator's own, stable across runs: the check never relies on them, it resolves
 * each assignment's appRoleId through the resource's appRoles, as against the real service.
 */
export function stableGuid(kind: string, name: string): string {
  const hex = createHash("sha256").update(`${kind}:${name}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
