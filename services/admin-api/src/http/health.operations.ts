import { z } from "zod";
import { defineOperation } from "../openapi/operation.ts";
import { ApiError } from "./api-error.ts";

/** Probes must never be served from a cache: each answer is about this moment. */
const noStore = { "Cache-Control": "no-store" };

/**
 * Liveness and readiness on the admin API's port, without a token (probes carry none). They
 * reveal only fixed phrases (readiness.ts), nothing about the deployment.
 */
export const healthOperations = [
  defineOperation({
    method: "get",
    path: "/healthz",
    operationId: "getLiveness",
    tag: "health",
    summary: "Liveness: the process is up and serving HTTP",
    description: "Checks nothing else, so a database outage never gets the process restarted.",
    access: "public",
    responses: {
      200: { description: "Up", schema: z.object({ status: z.literal("ok") }).meta({ id: "Liveness" }) },
    },
  }).handle(() => ({ status: 200, body: { status: "ok" }, headers: noStore })),

  defineOperation({
    method: "get",
    path: "/readyz",
    operationId: "getReadiness",
    tag: "health",
    summary: "Readiness: the database answers and the message bus is started",
    description: "503 `service.not_ready` names each check that is not `ok` in `checks`.",
    access: "public",
    errors: ["service.not_ready"],
    responses: {
      200: {
        description: "Ready to serve requests",
        schema: z
          .object({
            status: z.literal("ready"),
            checks: z.record(z.string(), z.literal("ok")).meta({ description: "database, messageBus" }),
          })
          .meta({ id: "Readiness" }),
      },
    },
  }).handle(async ({ deps }) => {
    const { ready, checks } = await deps.readiness.check();
    if (!ready) {
      const failing = Object.entries(checks).filter(([, state]) => state !== "ok");
      const detail = `not ready: ${failing.map(([name, state]) => `${name} ${state}`).join(", ")}`;
      throw new ApiError(503, "service.not_ready", detail, { checks });
    }
    return { status: 200, body: { status: "ready", checks: allOk(checks) }, headers: noStore };
  }),
];

function allOk(checks: Readonly<Record<string, string>>): Record<string, "ok"> {
  return Object.fromEntries(Object.keys(checks).map((name) => [name, "ok" as const]));
}
