import type { RequestHandler, Response, Router } from "express";
import {
  authenticate,
  principalOf,
  requireReadAccess,
  requireRole,
  type TokenVerifier,
} from "../auth/index.ts";
import type { Access, AnyReply, ApiDeps, Operation, StreamReply } from "./operation.ts";
import { validateRequest } from "./validate-request.ts";
import { acceptsIdempotencyKey, runIdempotently } from "../http/idempotency.ts";
import { isJsonMediaType, limitedBodyParsers } from "../http/body-limits.ts";
import { createHeavyRequestSlots, heavyRequestGate, holdingSlot } from "../http/concurrency-limit.ts";
import { routeLimits } from "../http/request-limits.ts";

/**
 * Mounts each operation at its own full path: auth first (so an anonymous caller learns nothing
 * about a request's validity), then a heavy route's slot (http/concurrency-limit.ts), then the
 * body parsers the operation declares with its byte limit (http/body-limits.ts), then validation
 * with its schemas, then the handler.
 */
export function mountOperations(
  router: Router,
  operations: readonly Operation[],
  options: { readonly verifier: TokenVerifier; readonly deps: ApiDeps },
): void {
  const slots = createHeavyRequestSlots(options.deps.requestLimits);
  for (const operation of operations) {
    const heavy = heavyRoute(operation);
    const handle: RequestHandler = async (req, res) => {
      const { params, query, body } = validateRequest(operation, req);
      const principal = operation.access === "public" ? undefined : principalOf(res);
      const act = async () =>
        operation.handle({ params, query, body, principal, deps: options.deps } as never);
      // Idempotency-Key (http/idempotency.ts): a retried POST answers as the first one did.
      const reply =
        principal !== undefined && acceptsIdempotencyKey(operation)
          ? await runIdempotently(
              options.deps.db,
              req,
              principal,
              act,
              operation.pathHoldsPersonalData === true ? operation.path : undefined,
            )
          : await act();
      if ("stream" in reply) await sendStream(res, operation, reply);
      else send(res, operation, reply);
    };
    router[operation.method](
      expressPath(operation),
      ...accessChecks(operation.access, options.verifier),
      ...(heavy ? [heavyRequestGate(operation, slots)] : []),
      ...limitedBodyParsers(operation, options.deps.requestLimits),
      heavy ? holdingSlot(handle) : handle,
    );
  }
}

/** Heavy routes (http/request-limits.ts) must say they can answer 429, so OpenAPI shows it. */
function heavyRoute(operation: Operation): boolean {
  if (routeLimits[operation.operationId]?.heavy !== true) return false;
  if (operation.access === "public" || !(operation.errors ?? []).includes("request.too_many_in_flight")) {
    throw new Error(
      `${operation.operationId} is a heavy route: it needs a caller and must declare request.too_many_in_flight`,
    );
  }
  return true;
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

function send(res: Response, operation: Operation, reply: Exclude<AnyReply, StreamReply>): void {
  const spec = operation.responses[reply.status];
  if (spec === undefined)
    throw new Error(`${operation.operationId} answered ${reply.status}, which it does not declare`);
  if (reply.headers !== undefined) res.set(reply.headers);
  res.status(reply.status);
  if (spec.contentType === undefined || isJsonMediaType(spec.contentType)) res.json(reply.body);
  else res.type(spec.contentType).send(reply.body);
}

/**
 * A streamed answer (operation.ts `streamed`): chunked, each chunk written as it comes and the next
 * one asked for only once the socket has taken it ('drain'), so a slow client holds the producer
 * back instead of filling memory. A client that disconnects ends the iteration (the producer's
 * `finally` runs and it stops reading); a producer that fails after the headers went out destroys
 * the connection, so the client sees a truncated transfer rather than a complete-looking file.
 */
async function sendStream(res: Response, operation: Operation, reply: StreamReply): Promise<void> {
  const spec = operation.responses[reply.status];
  if (spec?.streamed !== true)
    throw new Error(
      `${operation.operationId} streamed ${reply.status}, which it does not declare as streamed`,
    );
  if (reply.headers !== undefined) res.set(reply.headers);
  res.status(reply.status).type(spec.contentType ?? "text/plain");
  try {
    for await (const chunk of reply.stream) {
      if (res.destroyed) break;
      if (!res.write(chunk) && !(await drained(res))) break;
    }
  } catch (error) {
    if (!res.headersSent) throw error;
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  if (!res.destroyed) res.end();
}

/** True once the socket takes more, false when the connection closed first. */
function drained(res: Response): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on("drain", onDrain);
    res.on("close", onClose);
  });
}
