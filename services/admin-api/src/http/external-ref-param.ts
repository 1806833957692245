import { checkExternalRef, EXTERNAL_REF_MAX_LENGTH } from "@matoolkit/domain";
import { z } from "zod";
import { singleValue } from "./params.ts";

/**
 * A batch's external reference in a query (create and the list filter): the domain's rules
 * (checkExternalRef: trimmed, 1–128 characters, no control characters), its problem as the
 * parameter's message; the value itself is never repeated back.
 */
export const externalRefParam = singleValue
  .transform((text, context) => {
    const checked = checkExternalRef(text);
    if (checked.ok) return checked.value;
    context.addIssue({ code: "custom", message: checked.problem });
    return z.NEVER;
  })
  // Described in the OpenAPI document as what it is once checked (a transform has no JSON Schema).
  .pipe(z.string().min(1).max(EXTERNAL_REF_MAX_LENGTH));

export const externalRefDescription =
  `The change ticket or request id the batch belongs to (at most ${EXTERNAL_REF_MAX_LENGTH} ` +
  "characters, no control characters; surrounding spaces are trimmed)";
