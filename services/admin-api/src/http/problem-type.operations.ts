import { z } from "zod";
import { defineOperation } from "../openapi/operation.ts";
import { notFound } from "./api-error.ts";
import { textParam } from "./params.ts";
import { isProblemCode, problemTypes } from "./problem-types.ts";

/**
 * `GET /problems/{code}`: what a problem `type` URI resolves to (RFC 9457 asks that a locator
 * type be documented there), as plain text a person reads in a browser or terminal.
 */
export const problemTypeOperation = defineOperation({
  method: "get",
  path: "/problems/{code}",
  operationId: "describeProblemType",
  tag: "problems",
  summary: "Explain an error code (the target of a problem's `type`)",
  access: "public",
  params: z.object({ code: textParam.meta({ description: "A problem code, e.g. state.conflict" }) }),
  errors: ["resource.not_found"],
  responses: {
    200: { description: "Title, statuses and meaning", schema: z.string(), contentType: "text/plain" },
  },
}).handle(({ params }) => {
  if (!isProblemCode(params.code)) throw notFound(`no problem type '${params.code}'`);
  const { title, statuses, description } = problemTypes[params.code];
  const text = `${params.code}: ${title} (HTTP ${statuses.join(" or ")})\n\n${description}\n`;
  return { status: 200, body: text };
});
