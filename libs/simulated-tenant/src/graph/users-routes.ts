import { Router } from "express";
import type { DirectoryUser } from "../model.ts";
import { newDirectoryUser } from "../directory-user.ts";
import type { SimulatorContext } from "../simulator-context.ts";
import {
  bodyOf,
  contextUrl,
  operation,
  paramOf,
  sendBadRequest,
  sendNotFound,
  versionOf,
} from "./graph-responses.ts";
import { project, selectedProperties, selectSuffix } from "./select.ts";
import { describeWrite, readUserWrite } from "./user-body.ts";
import { onPremisesMasteredMessage, refusesSyncedWrite } from "./synced-user-rules.ts";
import { unknownToWriteReplica } from "./write-replica.ts";
import { userShape } from "./user-shape.ts";

/**
 * `/users` and `/users/{id | userPrincipalName}`: list, create, read, update, delete. Reads are
 * served from the replica (a user created a moment ago may be missing), writes and the
 * uniqueness check on the primary, as in Entra ID. A PATCH that changes no value records nothing.
 */
export function usersRoutes({ state }: SimulatorContext): Router {
  const router = Router();

  router.get("/users", (request, response) => {
    const properties = selectedProperties(request, response, userShape, versionOf(request));
    if (properties === undefined) return;
    const top = Number(request.query.$top ?? 100);
    const users = state.users.list().slice(0, Number.isInteger(top) && top > 0 ? top : 100);
    response.json({
      "@odata.context": contextUrl(request, `users${selectSuffix(request, properties)}`),
      value: users.map((user) => project(user, properties)),
    });
  });

  router.post("/users", (request, response) => {
    const write = readUserWrite(state, response, bodyOf(request), { create: true });
    if (write === undefined) return;
    const upn = write.properties.userPrincipalName!;
    const user = newDirectoryUser(state, {
      userPrincipalName: upn,
      displayName: write.properties.displayName!,
      mailNickname: write.properties.mailNickname!,
      ...write.properties,
    });
    state.users.put(user);
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: upn,
      detail: describeWrite(write),
    });
    const properties = versionOf(request) === "beta" ? userShape.properties : userShape.defaults;
    response
      .status(201)
      .json({ "@odata.context": contextUrl(request, "users/$entity"), ...project(user, properties) });
  });

  router.get("/users/:id", (request, response) => {
    const user = state.findUser(paramOf(request, "id"));
    if (user === undefined) return sendNotFound(response, paramOf(request, "id"));
    const properties = selectedProperties(request, response, userShape, versionOf(request));
    if (properties === undefined) return;
    response.json({
      "@odata.context": contextUrl(request, `users${selectSuffix(request, properties)}/$entity`),
      ...project(user, properties),
    });
  });

  router.patch("/users/:id", (request, response) => {
    const user = state.findUser(paramOf(request, "id"), "primary");
    if (user === undefined || unknownToWriteReplica(state, "user", user.id))
      return sendNotFound(response, paramOf(request, "id"));
    const write = readUserWrite(state, response, bodyOf(request), { create: false, userId: user.id });
    if (write === undefined) return;
    if (refusesSyncedWrite(state, user, write.properties, write.passwordSet))
      return sendBadRequest(response, onPremisesMasteredMessage);
    const updated: DirectoryUser = { ...user, ...write.properties };
    if (write.properties.userPrincipalName !== undefined) {
      updated.identities = user.identities.map((identity) =>
        identity.signInType === "userPrincipalName"
          ? { ...identity, issuerAssignedId: updated.userPrincipalName }
          : identity,
      );
    }
    // Graph answers 204 whether or not a value changed; only a real change is a new version and
    // a change-log entry, so "a re-run changed nothing" stays observable (a password is a change).
    const changed = (Object.keys(updated) as (keyof DirectoryUser)[]).some(
      (key) => JSON.stringify(updated[key]) !== JSON.stringify(user[key]),
    );
    if (changed || write.passwordSet) {
      state.users.put(updated);
      state.recordChange({
        api: "graph",
        operation: operation(request),
        target: user.userPrincipalName,
        detail: describeWrite(write),
      });
    }
    response.status(204).end();
  });

  router.delete("/users/:id", (request, response) => {
    const user = state.findUser(paramOf(request, "id"), "primary");
    if (user === undefined) return sendNotFound(response, paramOf(request, "id"));
    state.users.delete(user.id);
    // A deleted user leaves every group it was a direct member of.
    for (const group of state.groups.list("primary")) {
      if (group.members.includes(user.id)) {
        state.groups.put({ ...group, members: group.members.filter((member) => member !== user.id) });
      }
    }
    state.recordChange({
      api: "graph",
      operation: operation(request),
      target: user.userPrincipalName,
      detail: "deleted",
    });
    response.status(204).end();
  });

  return router;
}
