import type { Request } from "express";
import { badRequest } from "./api-error.ts";

export function positiveIntParam(req: Request, name: string): number {
  const raw = req.params[name];
  const value = Number(raw);
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value <= 0) {
    throw badRequest(`'${name}' must be a positive integer`);
  }
  return value;
}

export function pagination(
  req: Request,
  defaults = { limit: 100, max: 1000 },
): { limit: number; offset: number } {
  const limit = optionalInt(req, "limit") ?? defaults.limit;
  const offset = optionalInt(req, "offset") ?? 0;
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

function optionalInt(req: Request, name: string): number | undefined {
  const raw = optionalString(req, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`'${name}' must be a whole number`);
  return Number(raw);
}
