import { z } from "zod";
import { defineOperation } from "./operation.ts";
import type { OpenApiDocument } from "./openapi-document.ts";

/**
 * `GET /api/openapi.json` without a token, as API descriptions conventionally are: it tells how
 * to call the API, and every call it describes still needs its token.
 */
export function openApiOperation(describe: () => OpenApiDocument) {
  return defineOperation({
    method: "get",
    path: "/api/openapi.json",
    operationId: "getOpenApiDocument",
    tag: "meta",
    summary: "This API's OpenAPI 3.1 description",
    access: "public",
    responses: {
      200: {
        description: "The OpenAPI document, generated from the routes' own schemas",
        schema: z.record(z.string(), z.unknown()),
      },
    },
  }).handle(() => ({ status: 200, body: describe() }));
}
