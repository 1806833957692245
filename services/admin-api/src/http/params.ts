import type { Request } from "express";
import { badRequest } from "./api-error.ts";

/**
 * Ids and versions are PostgreSQL `integer` columns: a larger number would reach SQL and fail
 * there ("out of range for type integer", a 500), so it is refused here as bad input.
 */
const MAX_SQL_INTEGER = 2_147_483_647;

export function positiveIntParam(req: Request, name: string): number {
  const raw = req.params[name];
  const value = Number(raw);
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || value <= 0 || value > MAX_SQL_INTEGER) {
    throw badRequest(`'${name}' must be a positive integer (at most ${MAX_SQL_INTEGER})`);
  }
  return value;
}

export function pagination(
  req: Request,
  defaults = { limit: 100, max: 1000 },
): { limit: number; offset: number } {
  const limit = optionalWholeNumber(req, "limit") ?? defaults.limit;
  const offset = optionalWholeNumber(req, "offset") ?? 0;
  if (limit < 1 || limit > defaults.max) throw badRequest(`'limit' must be between 1 and ${defaults.max}`);
  if (offset < 0) throw badRequest("'offset' must be 0 or more");
  return { limit, offset };
}

export function optionalString(req: Request, name: string): string | undefined {
  const raw = req.query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || raw === "") throw badRequest(`'${name}' must be a non-empty string`);
  return raw;
}

/** A query parameter that must be a whole number (0 or more) when present; the error names it. */
export function optionalWholeNumber(req: Request, name: string): number | undefined {
  const raw = optionalString(req, name);
  if (raw === undefined) return undefined;
  // Safe integers only: 1e20 would pass the range checks above as an offset and then overflow
  // PostgreSQL's bigint (a 500 instead of a 400).
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw badRequest(`'${name}' must be a whole number`);
  }
  return Number(raw);
}
