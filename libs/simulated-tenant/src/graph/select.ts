import type { Request, Response } from "express";
import { graphErrorBody } from "../error-bodies.ts";

/**
 * OData `$select` as Graph applies it: a comma-separated list of property names of the entity
 * type, matched case-insensitively and answered in the type's own casing; an unknown name is a
 * 400 naming it, which is how a misspelt attribute in a runbook surfaces against a real tenant.
 */
export interface EntityShape {
  /** `microsoft.graph.user`, used in the error message. */
  readonly typeName: string;
  /** Every property that may be selected, in Graph's camelCase. */
  readonly properties: readonly string[];
  /** What Graph returns without `$select` (v1.0; beta returns every property). */
  readonly defaults: readonly string[];
  /** Properties only the beta endpoint knows: unknown (400) on v1.0. */
  readonly betaOnly?: readonly string[];
}

/**
 * The properties to return, or undefined after answering 400 for an unknown one. `id` is always
 * included, as Graph does.
 */
export function selectedProperties(
  request: Request,
  response: Response,
  shape: EntityShape,
  version: "v1.0" | "beta",
): readonly string[] | undefined {
  const raw = request.query.$select;
  if (raw === undefined || raw === "") return version === "beta" ? shape.properties : shape.defaults;
  const names = (Array.isArray(raw) ? raw.join(",") : String(raw))
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const known =
    version === "beta"
      ? shape.properties
      : shape.properties.filter((property) => !(shape.betaOnly ?? []).includes(property));
  const byLowerCase = new Map(known.map((property) => [property.toLowerCase(), property]));
  const selected = new Set<string>(["id"]);
  for (const name of names) {
    const property = byLowerCase.get(name.toLowerCase());
    if (property === undefined) {
      response
        .status(400)
        .json(
          graphErrorBody(
            "BadRequest",
            `Could not find a property named '${name}' on type '${shape.typeName}'.`,
          ),
        );
      return undefined;
    }
    selected.add(property);
  }
  return [...selected];
}

/** The `(a,b)` part of an `@odata.context` for a `$select`ed answer, or "" without `$select`. */
export function selectSuffix(request: Request, properties: readonly string[]): string {
  return request.query.$select === undefined ? "" : `(${properties.join(",")})`;
}

/** Only the selected properties; unmodelled ones Graph knows come back null. */
export function project(entity: object, properties: readonly string[]): Record<string, unknown> {
  const source = entity as Record<string, unknown>;
  return Object.fromEntries(properties.map((property) => [property, source[property] ?? null]));
}
