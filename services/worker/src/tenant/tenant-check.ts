import {
  MatoolkitError,
  reasonCodes,
  sanitizeErrorMessage,
  type TenantCheckLine,
  type TenantCheckReport,
  type TenantCheckRequest,
} from "@matoolkit/domain";
import {
  checkReadNeeds,
  exchangeAppPermission,
  needsOf,
  type ExchangeRole,
  type GraphPermissionNeed,
} from "./function-permissions.ts";
import type { GraphClient, GraphRequest } from "./graph-client.ts";
import { runbookTenantNeeds, type RunbookTenantNeeds } from "./runbook-needs.ts";
import type { TenantClients } from "./tenant-clients.ts";

/**
 * The pre-flight check of the worker's target tenant (issue 27, point 4): before a batch touches
 * the tenant, one line per thing the runbook's functions rely on, passed or failed with what is
 * missing named. It only reads, through the same clients the functions use (so it meets the same
 * endpoints, cloud and credential), and never puts a token or a secret in a line: errors are
 * described by their reason code and sanitized message.
 *
 * Well-known appIds of the resource service principals every tenant has: Microsoft Graph
 * (https://learn.microsoft.com/graph/permissions-grant-via-msgraph looks its service principal up
 * by this appId) and Office 365 Exchange Online (Microsoft's list of first-party apps,
 * https://learn.microsoft.com/power-platform/admin/apps-to-allow; the resource of
 * `Exchange.ManageAsApp`, https://learn.microsoft.com/powershell/exchange/app-only-auth-powershell-v2).
 */
export const microsoftGraphAppId = "00000003-0000-0000-c000-000000000000";
export const exchangeOnlineAppId = "00000002-0000-0ff1-ce00-000000000000";

export interface TenantCheckTarget {
  /** Which tenant and how, safe to show (createTenantClients' description). */
  readonly description: string;
  /** Application (client) id of the worker's app registration: its service principal holds the grants. */
  readonly appId: string;
  readonly clients: TenantClients;
  readonly now?: () => Date;
}

interface ServicePrincipal {
  readonly id: string;
  readonly appRoles?: readonly { readonly id: string; readonly value: string | null }[];
}
interface AppRoleAssignment {
  readonly appRoleId: string;
  readonly resourceId: string;
}

export async function runTenantCheck(
  target: TenantCheckTarget,
  request: TenantCheckRequest,
  signal: AbortSignal,
): Promise<TenantCheckReport> {
  const needs = runbookTenantNeeds(request.runbook?.steps);
  const { graph, exchange } = target.clients;
  const lines: TenantCheckLine[] = [];
  const line = (check: string, status: TenantCheckLine["status"], detail: string, missing: string[] = []) =>
    lines.push({ check, status, detail, missing });

  const graphNeeds = collectGraphNeeds(needs);
  const exchangeRole = requiredExchangeRole(needs);
  const invitesGuests = needs.functions.some((name) => needsOf(name)?.invitesGuests === true);

  // 1. Graph: the token, then the app's grants read from its service principal.
  const self = await attempt(() =>
    graph.request<ServicePrincipal>(
      { method: "GET", path: `/servicePrincipals(appId='${target.appId}')`, query: { $select: "id" } },
      signal,
    ),
  );
  const graphTokenFailed = isTokenFailure(self);
  if (graphTokenFailed) {
    line("graph.token", "failed", `No usable token for Microsoft Graph: ${describe(self.error)}`, [
      "Graph token",
    ]);
  } else {
    line("graph.token", "passed", "A token for Microsoft Graph was issued and accepted.");
  }

  let granted: { graph: Set<string>; exchange: Set<string> } | undefined;
  if (!graphTokenFailed) {
    granted = await readGrants(graph, self, signal, line);
  }
  if (granted !== undefined) {
    const missing = fewestGrants(
      graphNeeds.filter((entry) => !entry.need.anyOf.some((name) => granted!.graph.has(name))),
    );
    if (missing.length === 0) {
      line(
        "graph.permissions",
        "passed",
        graphNeeds.length === 0
          ? "No Microsoft Graph permission is needed."
          : `Granted, for ${plural(new Set(graphNeeds.flatMap((entry) => entry.functions)).size, "function")}: ${graphNeeds.map((entry) => `to ${entry.need.why}`).join(", ")}.`,
      );
    } else {
      line(
        "graph.permissions",
        "failed",
        `Missing Microsoft Graph application permission${missing.length > 1 ? "s" : ""}: ${missing
          .map(
            (entry) =>
              `${entry.need.anyOf[0]} (to ${entry.whys.join(", to ")}; needed by ${entry.functions.join(", ")})`,
          )
          .join("; ")}. Grant ${missing.length > 1 ? "them" : "it"} with admin consent.`,
        missing.map((entry) => entry.need.anyOf[0]),
      );
    }
    if (exchangeRole !== undefined) {
      if (granted.exchange.has(exchangeAppPermission)) {
        line(
          "exchange.permission",
          "passed",
          `${exchangeAppPermission} is granted on Office 365 Exchange Online.`,
        );
      } else {
        line(
          "exchange.permission",
          "failed",
          `Missing the Office 365 Exchange Online application permission ${exchangeAppPermission}; grant it with admin consent.`,
          [exchangeAppPermission],
        );
      }
    }
  }

  // 2. Exchange: the token and the role, with a harmless read.
  if (exchangeRole !== undefined) {
    const organization = await attempt(() => exchange.invoke("Get-OrganizationConfig", {}, signal));
    if (isTokenFailure(organization)) {
      line(
        "exchange.token",
        "failed",
        `No usable token for Exchange Online: ${describe(organization.error)}`,
        ["Exchange token"],
      );
      line("exchange.role", "skipped", "Not checked: no Exchange Online token.");
    } else {
      line("exchange.token", "passed", "A token for Exchange Online was issued.");
      if (organization.ok) {
        line(
          "exchange.role",
          "passed",
          `Get-OrganizationConfig ran: the app holds an Exchange role. The runbook's functions need ${exchangeRole}` +
            (exchangeRole === "Exchange Administrator"
              ? " (Set-ExchangeMailUserGuids sets reserved parameters), which a read cannot tell apart from a narrower role."
              : " or a broader role."),
        );
      } else if (
        reasonOf(organization.error) === reasonCodes.exchangeUnauthorized ||
        reasonOf(organization.error) === reasonCodes.exchangeForbidden
      ) {
        line(
          "exchange.role",
          "failed",
          `Exchange Online refused Get-OrganizationConfig (${describe(organization.error)}): assign the Entra role ${exchangeRole} to the app's service principal` +
            (granted?.exchange.has(exchangeAppPermission) === false
              ? ` and grant ${exchangeAppPermission}`
              : "") +
            ".",
          [exchangeRole],
        );
      } else {
        line("exchange.role", "warning", `Could not be checked: ${describe(organization.error)}.`);
      }
    }
  }

  // 3. B2B invitations: the tenant's policy must let them be sent.
  if (invitesGuests && !graphTokenFailed) {
    const policy = await attempt(() =>
      graph.request<{ allowInvitesFrom?: unknown }>(
        { method: "GET", path: "/policies/authorizationPolicy", query: { $select: "allowInvitesFrom" } },
        signal,
      ),
    );
    if (!policy.ok) {
      unreadable(
        line,
        "b2b.invitation_policy",
        "the B2B invitation policy",
        checkReadNeeds.invitationPolicy,
        policy.error,
      );
    } else {
      invitationPolicyLine(line, policy.value.allowInvitesFrom);
    }
  }

  // 4. Domains the runbook writes into the target tenant must be verified there.
  domainLines(line, needs, request.runbook !== undefined);
  if (needs.domains.length > 0 && !graphTokenFailed) {
    const listed = await attempt(() =>
      graph.request<{ value?: { id?: unknown; isVerified?: unknown }[] }>(
        { method: "GET", path: "/domains", query: { $select: "id,isVerified" } },
        signal,
      ),
    );
    if (!listed.ok) {
      unreadable(line, "domains.verified", "the tenant's domains", checkReadNeeds.domains, listed.error);
    } else {
      const verified = new Set(
        (listed.value.value ?? [])
          .filter((domain) => domain.isVerified === true && typeof domain.id === "string")
          .map((domain) => String(domain.id).toLowerCase()),
      );
      const unverified = needs.domains.filter((entry) => !verified.has(entry.domain));
      if (unverified.length === 0) {
        line(
          "domains.verified",
          "passed",
          `Verified: ${needs.domains.map((entry) => entry.domain).join(", ")}.`,
        );
      } else {
        line(
          "domains.verified",
          "failed",
          `Not a verified domain of the tenant: ${unverified
            .map((entry) => `${entry.domain} (${entry.sources.join(", ")})`)
            .join(
              "; ",
            )}. Add and verify ${unverified.length > 1 ? "them" : "it"} in the tenant, or fix the runbook.`,
          unverified.map((entry) => entry.domain),
        );
      }
    }
  }

  if (needs.unchecked.length > 0) {
    line(
      "runbook.functions",
      "skipped",
      `Not checked (not a standard function, so their needs are unknown here): ${needs.unchecked.join(", ")}.`,
    );
  }

  return {
    tenant: target.description,
    runbook:
      request.runbook === undefined ? null : { name: request.runbook.name, version: request.runbook.version },
    functions: [...needs.functions],
    passed: lines.every((entry) => entry.status !== "failed"),
    lines,
    checkedAt: (target.now ?? (() => new Date()))().toISOString(),
  };
}

type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

async function attempt<T>(run: () => Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, error };
  }
}

function reasonOf(error: unknown): string | undefined {
  return error instanceof MatoolkitError ? error.reason : undefined;
}

/** No token, or one the service refused outright (401): the credential, not a permission. */
function isTokenFailure(result: Attempt<unknown>): result is { ok: false; error: unknown } {
  if (result.ok) return false;
  const reason = reasonOf(result.error);
  return (
    reason === reasonCodes.tenantAuthFailed ||
    reason === reasonCodes.tenantNotConfigured ||
    reason === reasonCodes.graphUnauthorized
  );
}

/** The reason code and the adapter's sanitized message: never a token, a secret or a body. */
function describe(error: unknown): string {
  if (error instanceof MatoolkitError) return `${error.reason}: ${sanitizeErrorMessage(error.message, 240)}`;
  if (error instanceof Error) return sanitizeErrorMessage(`${error.name}: ${error.message}`, 240);
  return "unknown error";
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

type LineWriter = (
  check: string,
  status: TenantCheckLine["status"],
  detail: string,
  missing?: string[],
) => void;

/** A read the check needs was refused (403) or failed: say which permission lets it read. */
function unreadable(
  line: LineWriter,
  check: string,
  what: string,
  need: GraphPermissionNeed,
  error: unknown,
): void {
  if (reasonOf(error) === reasonCodes.graphForbidden) {
    line(
      check,
      "warning",
      `Could not read ${what}: the app lacks ${need.anyOf[0]} (only the check needs it, to ${need.why}); grant it to have this verified.`,
      [need.anyOf[0]],
    );
    return;
  }
  line(check, "warning", `Could not read ${what}: ${describe(error)}.`);
}

function collectGraphNeeds(needs: RunbookTenantNeeds): { need: GraphPermissionNeed; functions: string[] }[] {
  const byPermission = new Map<string, { need: GraphPermissionNeed; functions: string[] }>();
  for (const name of needs.functions) {
    for (const need of needsOf(name)?.graph ?? []) {
      const key = need.anyOf.join(",");
      const entry = byPermission.get(key) ?? { need, functions: [] };
      entry.functions.push(name);
      byPermission.set(key, entry);
    }
  }
  return [...byPermission.values()];
}

/**
 * The permissions to grant: a missing need that another missing need's permission also covers
 * (GroupMember.Read.All when GroupMember.ReadWrite.All must be granted anyway) is folded into it,
 * so the list is the fewest grants without asking for more privilege than the runbook needs.
 */
function fewestGrants(
  missing: readonly { need: GraphPermissionNeed; functions: string[] }[],
): { need: GraphPermissionNeed; whys: string[]; functions: string[] }[] {
  const kept = missing.map((entry) => ({
    need: entry.need,
    whys: [entry.need.why],
    functions: [...entry.functions],
  }));
  for (const entry of [...kept]) {
    const cover = kept.find((other) => other !== entry && entry.need.anyOf.includes(other.need.anyOf[0]));
    if (cover === undefined) continue;
    cover.whys.push(...entry.whys);
    for (const name of entry.functions) if (!cover.functions.includes(name)) cover.functions.push(name);
    kept.splice(kept.indexOf(entry), 1);
  }
  return kept;
}

function requiredExchangeRole(needs: RunbookTenantNeeds): ExchangeRole | undefined {
  const roles = needs.functions
    .map((name) => needsOf(name)?.exchangeRole)
    .filter((role) => role !== undefined);
  if (roles.length === 0) return undefined;
  return roles.includes("Exchange Administrator")
    ? "Exchange Administrator"
    : "Exchange Recipient Administrator";
}

/**
 * The app's granted application permissions: its app role assignments
 * (GET /servicePrincipals/{id}/appRoleAssignments,
 * https://learn.microsoft.com/graph/api/serviceprincipal-list-approleassignments), each appRoleId
 * resolved to its permission name through the resource service principal's `appRoles`
 * (https://learn.microsoft.com/graph/api/resources/approle): Microsoft Graph's for Graph
 * permissions, Office 365 Exchange Online's for Exchange.ManageAsApp. The service principal is
 * found by its appId (GET /servicePrincipals(appId='{appId}'),
 * https://learn.microsoft.com/graph/api/serviceprincipal-get).
 */
async function readGrants(
  graph: GraphClient,
  self: Attempt<ServicePrincipal>,
  signal: AbortSignal,
  line: LineWriter,
): Promise<{ graph: Set<string>; exchange: Set<string> } | undefined> {
  const fail = (error: unknown) => {
    if (reasonOf(error) === reasonCodes.graphNotFound) {
      line(
        "graph.permissions",
        "failed",
        "The app has no service principal in this tenant: add the app to the tenant (admin consent creates it).",
        ["service principal"],
      );
      return undefined;
    }
    unreadable(line, "graph.permissions", "the app's granted permissions", checkReadNeeds.grants, error);
    return undefined;
  };
  if (!self.ok) return fail(self.error);
  const assignments = await attempt(() =>
    pages<AppRoleAssignment>(
      graph,
      { method: "GET", path: `/servicePrincipals/${encodeURIComponent(self.value.id)}/appRoleAssignments` },
      signal,
    ),
  );
  if (!assignments.ok) return fail(assignments.error);
  const resolve = async (appId: string): Promise<Set<string>> => {
    const resource = await graph.request<ServicePrincipal>(
      { method: "GET", path: `/servicePrincipals(appId='${appId}')`, query: { $select: "id,appRoles" } },
      signal,
    );
    const names = new Map((resource.appRoles ?? []).map((role) => [role.id, role.value ?? ""]));
    return new Set(
      assignments.value
        .filter((assignment) => assignment.resourceId === resource.id)
        .map((assignment) => names.get(assignment.appRoleId))
        .filter((name): name is string => name !== undefined && name !== ""),
    );
  };
  const resolved = await attempt(async () => ({
    graph: await resolve(microsoftGraphAppId),
    exchange: await resolve(exchangeOnlineAppId),
  }));
  if (!resolved.ok) return fail(resolved.error);
  return resolved.value;
}

/** A Graph collection, every page (`@odata.nextLink`, on the same service, is followed). */
async function pages<T>(graph: GraphClient, first: GraphRequest, signal: AbortSignal): Promise<T[]> {
  const items: T[] = [];
  let request: GraphRequest | undefined = first;
  for (let page = 0; request !== undefined && page < 100; page++) {
    const body: { value?: T[]; "@odata.nextLink"?: unknown } = await graph.request(request, signal);
    items.push(...(body.value ?? []));
    const next = body["@odata.nextLink"];
    request = typeof next === "string" ? nextPage(next) : undefined;
  }
  return items;
}

function nextPage(link: string): GraphRequest | undefined {
  const url = new URL(link);
  const match = /^\/(v1\.0|beta)(\/.*)$/u.exec(url.pathname);
  if (match === null) return undefined;
  return {
    method: "GET",
    path: match[2]!,
    version: match[1] as "v1.0" | "beta",
    query: Object.fromEntries(url.searchParams),
  };
}

/**
 * `allowInvitesFrom` (https://learn.microsoft.com/graph/api/resources/authorizationpolicy): none,
 * adminsAndGuestInviters, adminsGuestInvitersAndAllMembers, everyone ("everyone is the default
 * setting for all cloud environments except US Government").
 */
function invitationPolicyLine(line: LineWriter, value: unknown): void {
  switch (value) {
    case "everyone":
    case "adminsGuestInvitersAndAllMembers":
      line("b2b.invitation_policy", "passed", `B2B invitations are allowed (allowInvitesFrom: ${value}).`);
      return;
    case "adminsAndGuestInviters":
      line(
        "b2b.invitation_policy",
        "warning",
        "Only admins and Guest Inviters may invite (allowInvitesFrom: adminsAndGuestInviters); whether an app's invitation counts as an admin's is not documented. If New-EntraB2BInvitation is refused, assign the Guest Inviter role to the app's service principal.",
      );
      return;
    case "none":
      line(
        "b2b.invitation_policy",
        "failed",
        "Nobody may send B2B invitations (allowInvitesFrom: none): New-EntraB2BInvitation will be refused. Allow invitations in External collaboration settings.",
        ["B2B invitations allowed (allowInvitesFrom is none)"],
      );
      return;
    default:
      line(
        "b2b.invitation_policy",
        "warning",
        "The invitation policy's allowInvitesFrom has a value this check does not know.",
      );
  }
}

function domainLines(line: LineWriter, needs: RunbookTenantNeeds, hasRunbook: boolean): void {
  if (!hasRunbook) {
    line("domains.verified", "skipped", "No runbook given: domains are checked for a runbook (--runbook).");
    return;
  }
  if (needs.undeterminedDomains.length > 0) {
    line(
      "domains.undetermined",
      "skipped",
      `Decided by member data or an earlier step, so not checked before the batch: ${needs.undeterminedDomains.join(", ")}.`,
    );
  }
  if (needs.domains.length === 0) {
    line("domains.verified", "skipped", "The runbook names no literal target-tenant domain.");
  }
}
