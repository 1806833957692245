import express, { type RequestHandler, type Response, type Router } from "express";
import {
  authenticate,
  principalOf,
  requireReadAccess,
  requireRole,
  type TokenVerifier,
} from "../auth/index.ts";
import type { Access, AnyReply, ApiDeps, BodySpec, Operation } from "./operation.ts";
import { validateRequest } from "./validate-request.ts";

/**
 * Mounts each operation at its own full path: auth first (so an anonymous caller learns nothing
 * about a request's validity), then the body parsers the operation declares, then validation
 * with its schemas, then the handler.
 */
export function mountOperations(
  router: Router,
  operations: readonly Operation[],
  options: { readonly verifier: TokenVerifier; readonly deps: ApiDeps },
): void {
  for (const operation of operations) {
    router[operation.method](
      expressPath(operation),
      ...accessChecks(operation.access, options.verifier),
      ...bodyParsers(operation.body),
      async (req, res) => {
        const { params, query, body } = validateRequest(operation, req);
        const principal = operation.access === "public" ? undefined : principalOf(res);
        const reply = await operation.handle({ params, query, body, principal, deps: options.deps } as never);
        send(res, operation, reply);
      },
    );
  }
}

/** `/api/batches/{id}` → `/api/batches/:id`; every `{name}` must be a field of `params`. */
function expressPath(operation: Operation): string {
  const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const declared = Object.keys(operation.params?.shape ?? {});
  if (names.sort().join() !== declared.sort().join()) {
    throw new Error(
      `${operation.operationId}: path parameters ${names.join()} but params declares ${declared.join()}`,
    );
  }
  return operation.path.replace(/\{(\w+)\}/g, ":$1");
}

function accessChecks(access: Access, verifier: TokenVerifier): RequestHandler[] {
  if (access === "public") return [];
  if (access === "read") return [authenticate(verifier), requireReadAccess];
  return [authenticate(verifier), requireReadAccess, requireRole(access)];
}

/** JSON media types are parsed as JSON, everything else as text. */
function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || mediaType.endsWith("+json");
}

function bodyParsers(body: BodySpec | undefined): RequestHandler[] {
  if (body === undefined) return [];
  const types = Object.keys(body.content);
  const json = types.filter(isJsonMediaType);
  const text = types.filter((type) => !isJsonMediaType(type));
  return [
    ...(json.length > 0 ? [express.json({ type: json, limit: body.limit })] : []),
    ...(text.length > 0 ? [express.text({ type: text, limit: body.limit })] : []),
  ];
}

function send(res: Response, operation: Operation, reply: AnyReply): void {
  const spec = operation.responses[reply.status];
  if (spec === undefined)
    throw new Error(`${operation.operationId} answered ${reply.status}, which it does not declare`);
  if (reply.headers !== undefined) res.set(reply.headers);
  res.status(reply.status);
  if (spec.contentType === undefined || isJsonMediaType(spec.contentType)) res.json(reply.body);
  else res.type(spec.contentType).send(reply.body);
}
