import type { Request, Response } from "express";
import { graphErrorBody } from "../error-bodies.ts";

/**
 * Response helpers shared by the Graph route modules: the `@odata.context` URLs and the error
 * answers Graph gives for the situations the standard functions must recognise (404 on a missing
 * object, 400 ObjectConflict on a taken UPN, 400 on an unknown `$select` property).
 */
export type GraphVersion = "v1.0" | "beta";

/** Routes are mounted under both `/v1.0` and `/beta`; the mount point says which one was called. */
export function versionOf(request: Request): GraphVersion {
  return request.baseUrl.endsWith("/beta") ? "beta" : "v1.0";
}

/** `https://graph.microsoft.com/v1.0/$metadata#users/$entity`, as Graph writes it. */
export function contextUrl(request: Request, fragment: string): string {
  return `https://graph.microsoft.com/${versionOf(request)}/$metadata#${fragment}`;
}

export function sendNotFound(response: Response, id: string): void {
  response
    .status(404)
    .json(
      graphErrorBody(
        "Request_ResourceNotFound",
        `Resource '${id}' does not exist or one of its queried reference-property objects are not present.`,
      ),
    );
}

export function sendBadRequest(
  response: Response,
  message: string,
  details?: ReadonlyArray<{ code: string; message: string; target?: string }>,
  code = "Request_BadRequest",
): void {
  response.status(400).json(graphErrorBody(code, message, details));
}

/** Graph's answer to a create or update that would duplicate a unique property. */
export function sendObjectConflict(response: Response, property: string): void {
  const message = `Another object with the same value for property ${property} already exists.`;
  sendBadRequest(response, message, [{ code: "ObjectConflict", message, target: property }]);
}

export function sendInvalidValue(response: Response, property: string, resource: string): void {
  const message = `Invalid value specified for property '${property}' of resource '${resource}'.`;
  sendBadRequest(response, message, [{ code: "InvalidValue", message, target: property }]);
}

/** What Graph answers for a path segment it does not know (e.g. a beta-only action on v1.0). */
export function sendUnknownSegment(response: Response, segment: string): void {
  sendBadRequest(response, `Resource not found for the segment '${segment}'.`, undefined, "BadRequest");
}

/** A request body as an object (express.json() leaves `{}`-less requests undefined). */
export function bodyOf(request: Request): Record<string, unknown> {
  const body: unknown = request.body;
  return typeof body === "object" && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

/** A route parameter as one string (Express 5 types allow arrays for wildcard params). */
export function paramOf(request: Request, name: string): string {
  const value: unknown = request.params[name];
  return Array.isArray(value) ? value.join("/") : String(value ?? "");
}

/** `POST /v1.0/users/:id`: the change log names the route, not the ids in the URL. */
export function operation(request: Request): string {
  const route = (request.route as { path?: unknown } | undefined)?.path;
  return `${request.method} /${versionOf(request)}${typeof route === "string" ? route : request.path}`;
}
