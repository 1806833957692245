import { PROBLEM_CONTENT_TYPE } from "../http/problem-details.ts";
import { problemTypes, type ProblemCode } from "../http/problem-types.ts";
import type { JsonSchema } from "./json-schema.ts";
import type { Operation } from "./operation.ts";
import { acceptsIdempotencyKey } from "../http/idempotency.ts";

/**
 * Every (code, status) an operation can answer with: those its declaration implies (auth,
 * validation, body limits, the 500 every route can give) and those its handler declares.
 */
function problemCodesOf(operation: Operation): ReadonlyMap<ProblemCode, number[]> {
  const found = new Map<ProblemCode, number[]>();
  const add = (code: ProblemCode, statuses: readonly number[] = problemTypes[code].statuses) =>
    found.set(code, [...new Set([...(found.get(code) ?? []), ...statuses])]);
  if (operation.access !== "public") {
    add("auth.unauthenticated");
    // A valid token without the role the operation (or reading at all) needs.
    add("auth.forbidden");
    add("auth.keys_unavailable");
  }
  if (operation.params !== undefined || operation.query !== undefined || operation.body !== undefined) {
    add("validation.invalid_input");
  }
  if (operation.body !== undefined) {
    add("payload.too_large");
    add("payload.unsupported");
  }
  if (acceptsIdempotencyKey(operation)) {
    add("idempotency.in_progress");
    add("idempotency.key_reused");
  }
  for (const spec of operation.errors ?? []) {
    if (typeof spec === "string") add(spec);
    else add(spec[0], [spec[1]]);
  }
  add("unexpected.exception");
  return found;
}

/** One response per status, its `code` narrowed to the codes that status can carry here. */
export function problemResponses(operation: Operation, problemRef: JsonSchema) {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const [code, statuses] of problemCodesOf(operation)) {
    for (const status of statuses) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, codes]) => [
        String(status),
        {
          description: codes.map((code) => `\`${code}\`: ${problemTypes[code].title}`).join("; "),
          ...(status === 401
            ? {
                headers: {
                  "WWW-Authenticate": {
                    description: "RFC 6750 bearer challenge",
                    schema: { type: "string" },
                  },
                },
              }
            : {}),
          content: {
            [PROBLEM_CONTENT_TYPE]: {
              schema: {
                allOf: [problemRef, { properties: { code: { enum: codes }, status: { const: status } } }],
              },
            },
          },
        },
      ]),
  );
}
