import { Router } from "express";
import { z } from "zod";
import type { DirectoryGroup } from "../model.ts";
import type { SimulatorContext } from "../simulator-context.ts";
import { creationManagedByExchange, mailEnabledGroupCreateMessage } from "./group-write-rules.ts";
import {
  bodyOf,
  sendBadRequest,
  contextUrl,
  operation,
  paramOf,
  sendInvalidValue,
  sendNotFound,
  versionOf,
} from "./graph-responses.ts";
import { project, selectedProperties, selectSuffix, type EntityShape } from "./select.ts";

export const groupShape: EntityShape = {
  typeName: "microsoft.graph.group",
  properties: [
    "id",
    "displayName",
    "mailNickname",
    "mail",
    "description",
    "groupTypes",
    "securityEnabled",
    "mailEnabled",
  ],
  defaults: [
    "id",
    "displayName",
    "mailNickname",
    "mail",
    "description",
    "groupTypes",
    "securityEnabled",
    "mailEnabled",
  ],
};

const createGroupSchema = z.object({
  displayName: z.string().min(1),
  mailNickname: z.string().min(1),
  mailEnabled: z.boolean(),
  securityEnabled: z.boolean(),
  description: z.string().nullable().optional(),
  groupTypes: z.array(z.string()).optional(),
});

/**
 * `/groups` and `/groups/{id}`: create, read, delete. Membership lives in membership-routes.ts.
 * Graph addresses groups by id only (no display-name lookup), so neither does this.
 */
export function groupsRoutes({ state }: SimulatorContext): Router {
  const router = Router();

  router.post("/groups", (request, response) => {
    const parsed = createGroupSchema.safeParse(bodyOf(request));
    if (!parsed.success) {
      return sendInvalidValue(response, String(parsed.error.issues[0]?.path[0] ?? "displayName"), "Group");
    }
    const input = parsed.data;
    if (creationManagedByExchange(state, input))
      return sendBadRequest(response, mailEnabledGroupCreateMessage);
    const group: DirectoryGroup = {
      id: state.newId(),
      displayName: input.displayName,
      mailNickname: input.mailNickname,
      mail: input.mailEnabled ? `${input.mailNickname}@${state.domains[0]!}` : null,
      description: input.description ?? null,
      groupTypes: input.groupTypes ?? [],
      securityEnabled: input.securityEnabled,
      mailEnabled: input.mailEnabled,
      members: [],
    };
    state.groups.put(group);
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: group.displayName,
      detail: `created group (securityEnabled=${group.securityEnabled}, mailEnabled=${group.mailEnabled})`,
    });
    response.status(201).json({
      "@odata.context": contextUrl(request, "groups/$entity"),
      ...project(group, groupShape.properties),
    });
  });

  router.get("/groups/:id", (request, response) => {
    const group = state.groups.get(paramOf(request, "id"));
    if (group === undefined) return sendNotFound(response, paramOf(request, "id"));
    const properties = selectedProperties(request, response, groupShape, versionOf(request));
    if (properties === undefined) return;
    response.json({
      "@odata.context": contextUrl(request, `groups${selectSuffix(request, properties)}/$entity`),
      ...project(group, properties),
    });
  });

  router.delete("/groups/:id", (request, response) => {
    const group = state.groups.get(paramOf(request, "id"), "primary");
    if (group === undefined) return sendNotFound(response, paramOf(request, "id"));
    state.groups.delete(group.id);
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: group.displayName,
      detail: "deleted",
    });
    response.status(204).end();
  });

  return router;
}
