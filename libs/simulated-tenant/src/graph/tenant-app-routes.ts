import { Router, type Request, type Response } from "express";
import type { SimulatorContext } from "../simulator-context.ts";
import {
  exchangeOnlineAppId,
  microsoftGraphAppId,
  simulatedGraphAppRoles,
  simulatedWorkerAppId,
  stableGuid,
  type TenantApp,
} from "../tenant-app.ts";
import { contextUrl, paramOf, sendNotFound } from "./graph-responses.ts";
import { project, selectedProperties, selectSuffix, type EntityShape } from "./select.ts";
import { versionOf } from "./graph-responses.ts";

/**
 * What the pre-flight check reads, in Graph's shapes:
 * - `GET /servicePrincipals(appId='{appId}')` and `GET /servicePrincipals/{id}`: a servicePrincipal
 *   (https://learn.microsoft.com/graph/api/serviceprincipal-get; resource shape
 *   https://learn.microsoft.com/graph/api/resources/serviceprincipal, appRoles as
 *   https://learn.microsoft.com/graph/api/resources/approle);
 * - `GET /servicePrincipals/{id}/appRoleAssignments`: the app roles granted to it, i.e. its
 *   application permissions (https://learn.microsoft.com/graph/api/serviceprincipal-list-approleassignments;
 *   https://learn.microsoft.com/graph/api/resources/approleassignment);
 * - (`GET /policies/authorizationPolicy` is invitation-policy.ts's: the `allowInvitesFrom` behaviour);
 * - `GET /domains`: `{ value: [domain] }` with `isVerified`
 *   (https://learn.microsoft.com/graph/api/domain-list).
 * Three service principals exist: the worker's app, Microsoft Graph and Office 365 Exchange Online.
 */
const servicePrincipalShape: EntityShape = {
  typeName: "microsoft.graph.servicePrincipal",
  properties: [
    "id",
    "appId",
    "appDisplayName",
    "displayName",
    "servicePrincipalType",
    "accountEnabled",
    "appRoles",
  ],
  defaults: [
    "id",
    "appId",
    "appDisplayName",
    "displayName",
    "servicePrincipalType",
    "accountEnabled",
    "appRoles",
  ],
};

const domainShape: EntityShape = {
  typeName: "microsoft.graph.domain",
  properties: [
    "id",
    "authenticationType",
    "isAdminManaged",
    "isDefault",
    "isInitial",
    "isRoot",
    "isVerified",
    "supportedServices",
  ],
  defaults: [
    "id",
    "authenticationType",
    "isAdminManaged",
    "isDefault",
    "isInitial",
    "isRoot",
    "isVerified",
    "supportedServices",
  ],
};

interface ServicePrincipal {
  readonly id: string;
  readonly appId: string;
  readonly appDisplayName: string;
  readonly displayName: string;
  readonly servicePrincipalType: "Application";
  readonly accountEnabled: boolean;
  readonly appRoles: readonly Record<string, unknown>[];
}

function appRole(resource: string, value: string): Record<string, unknown> {
  return {
    allowedMemberTypes: ["Application"],
    description: `Allows the app to ${value} without a signed-in user.`,
    displayName: value,
    id: stableGuid(`role:${resource}`, value),
    isEnabled: true,
    origin: "Application",
    value,
  };
}

function servicePrincipals(app: TenantApp): ServicePrincipal[] {
  const make = (appId: string, name: string, roles: readonly string[]): ServicePrincipal => ({
    id: appId === app.appId ? app.servicePrincipalId : stableGuid("sp", appId),
    appId,
    appDisplayName: name,
    displayName: name,
    servicePrincipalType: "Application",
    accountEnabled: true,
    appRoles: roles.map((role) => appRole(appId, role)),
  });
  return [
    make(simulatedWorkerAppId, "matoolkit worker", []),
    make(microsoftGraphAppId, "Microsoft Graph", simulatedGraphAppRoles),
    make(exchangeOnlineAppId, "Office 365 Exchange Online", ["Exchange.ManageAsApp"]),
  ];
}

/** The worker app's grants, as app role assignments on the resource service principals. */
function assignments(app: TenantApp): Record<string, unknown>[] {
  const [worker, graph, exchange] = servicePrincipals(app);
  const assignment = (resource: ServicePrincipal, value: string) => ({
    id: stableGuid(`assignment:${resource.appId}`, value),
    deletedDateTime: null,
    appRoleId: stableGuid(`role:${resource.appId}`, value),
    createdDateTime: "2026-01-05T09:00:00Z",
    principalDisplayName: worker!.displayName,
    principalId: worker!.id,
    principalType: "ServicePrincipal",
    resourceDisplayName: resource.displayName,
    resourceId: resource.id,
  });
  return [
    ...[...app.graphPermissions].map((value) => assignment(graph!, value)),
    ...(app.exchangeManageAsApp ? [assignment(exchange!, "Exchange.ManageAsApp")] : []),
  ];
}

export function tenantAppRoutes({ state, app }: SimulatorContext): Router {
  const router = Router();

  const sendServicePrincipal = (
    request: Request,
    response: Response,
    found: ServicePrincipal | undefined,
    key: string,
  ) => {
    if (found === undefined) {
      sendNotFound(response, key);
      return;
    }
    const properties = selectedProperties(request, response, servicePrincipalShape, versionOf(request));
    if (properties === undefined) return;
    response.json({
      "@odata.context": contextUrl(request, `servicePrincipals${selectSuffix(request, properties)}/$entity`),
      ...project(found, properties),
    });
  };

  // Express cannot route `(appId='…')` with a path pattern: match the raw path.
  router.get(/^\/servicePrincipals\(appId=(?:'|%27)([^'%]*)(?:'|%27)\)$/u, (request, response) => {
    const appId = decodeURIComponent(String((request.params as Record<string, string>)[0] ?? ""));
    const found = servicePrincipals(app).find((sp) => sp.appId.toLowerCase() === appId.toLowerCase());
    sendServicePrincipal(request, response, found, `servicePrincipals(appId='${appId}')`);
  });

  router.get("/servicePrincipals/:id", (request, response) => {
    const id = paramOf(request, "id");
    sendServicePrincipal(
      request,
      response,
      servicePrincipals(app).find((sp) => sp.id === id),
      id,
    );
  });

  router.get("/servicePrincipals/:id/appRoleAssignments", (request, response) => {
    const id = paramOf(request, "id");
    const principal = servicePrincipals(app).find((sp) => sp.id === id);
    if (principal === undefined) {
      sendNotFound(response, id);
      return;
    }
    response.json({
      "@odata.context": contextUrl(request, `servicePrincipals('${id}')/appRoleAssignments`),
      value: principal.id === app.servicePrincipalId ? assignments(app) : [],
    });
  });

  router.get("/domains", (request, response) => {
    const properties = selectedProperties(request, response, domainShape, versionOf(request));
    if (properties === undefined) return;
    const domain = (name: string, verified: boolean, index: number) => ({
      id: name,
      authenticationType: "Managed",
      isAdminManaged: true,
      isDefault: index === 0,
      isInitial: index === 0,
      isRoot: true,
      isVerified: verified,
      supportedServices: verified ? ["Email", "OfficeCommunicationsOnline"] : [],
    });
    const all = [
      ...state.domains.map((name, index) => domain(name, true, index)),
      ...app.unverifiedDomains.map((name) => domain(name, false, -1)),
    ];
    response.json({
      "@odata.context": contextUrl(request, `domains${selectSuffix(request, properties)}`),
      value: all.map((entry) => project(entry, properties)),
    });
  });

  return router;
}
