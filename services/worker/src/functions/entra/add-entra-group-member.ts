import { z } from "zod";
import { graphErrorOf } from "../../tenant/graph-error-mapping.ts";
import { parseFunctionParams } from "../parse-function-params.ts";
import type { WorkerFunction } from "../worker-function.ts";
import type { EntraSettings } from "./entra-options.ts";
import { text, userReference } from "./entra-params.ts";
import { groupPath } from "./graph-paths.ts";
import { resolveGroup, resolveUser } from "./resolve-directory-object.ts";

const name = "Add-EntraGroupMember";
const params = z.object({ GroupId: text, UserId: userReference });

/**
 * Add-EntraGroupMember (Boolean): makes the user a direct member of the group.
 * Idempotent through Graph's own answer: adding an existing member is a 400 "One or more added
 * object references already exist", taken as done. Group or user missing (after the replication
 * grace) → NonRetriable graph.not_found naming GroupId or UserId.
 */
export function addEntraGroupMember(settings: EntraSettings): WorkerFunction {
  return async (raw, context) => {
    const { GroupId, UserId } = parseFunctionParams(name, params, raw);
    const group = await resolveGroup(
      context,
      settings,
      { functionName: name, parameter: "GroupId" },
      GroupId,
    );
    const user = await resolveUser(context, settings, { functionName: name, parameter: "UserId" }, UserId);
    try {
      await context.tenant.graph.request(
        {
          method: "POST",
          path: groupPath(group.id, "/members/$ref"),
          body: { "@odata.id": `https://graph.microsoft.com/v1.0/directoryObjects/${user.id}` },
        },
        context.signal,
      );
    } catch (error) {
      if (!isAlreadyMember(error)) throw error;
    }
    return true;
  };
}

function isAlreadyMember(error: unknown): boolean {
  const info = graphErrorOf(error);
  return (
    info !== undefined && info.status === 400 && /added object references already exist/i.test(info.message)
  );
}
