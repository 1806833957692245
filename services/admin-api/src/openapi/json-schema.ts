import { z } from "zod";

export type JsonSchema = Record<string, unknown>;

/**
 * zod → JSON Schema draft 2020-12 (OpenAPI 3.1's dialect) with `z.toJSONSchema`. Schemas that
 * carry a `.meta({ id })` become `components.schemas` entries referenced by `$ref`, collected
 * here across all conversions; one id with two different shapes is a bug and throws.
 *
 * `io` picks the side of transforms: "input" for bodies and responses (what travels: a
 * timestamp codec is a date-time string), "output" for path and query parameters (strings
 * parsed into what they mean: `limit` is an integer 1…1000).
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const converted = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "throw",
      override: ({ jsonSchema }) => tidy(jsonSchema as JsonSchema),
    }) as JsonSchema;
    const { $schema: _dialect, $defs, ...root } = converted;
    for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      this.add(id, withComponentRefs(definition) as JsonSchema);
    }
    return withComponentRefs(root) as JsonSchema;
  }

  private add(id: string, definition: JsonSchema): void {
    const existing = this.schemas[id];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(definition)) {
      throw new Error(`schema id '${id}' has two different shapes; give one of them another id`);
    }
    this.schemas[id] = definition;
  }
}

/** Noise zod adds that says nothing to a reader: the ISO regex behind `format: date-time`, safe-integer bounds. */
function tidy(schema: JsonSchema): void {
  if (schema.format === "date-time") delete schema.pattern;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
}

function withComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withComponentRefs);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === "$ref" && typeof inner === "string"
        ? inner.replace(/^#\/\$defs\//, "#/components/schemas/")
        : withComponentRefs(inner),
    ]),
  );
}
