import { createHash, randomUUID } from "node:crypto";
import {
  claimApiIdempotencyKey,
  completeApiIdempotencyKey,
  releaseApiIdempotencyKey,
  type ApiIdempotencyKey,
  type Db,
} from "@matoolkit/db";
import type { Request } from "express";
import type { Principal } from "../auth/index.ts";
import type { AnyReply, Operation } from "../openapi/operation.ts";
import { CsvUpload } from "../csv/csv-upload.ts";
import { loopSlicer } from "../csv/time-slicer.ts";
import { ApiError, badRequest } from "./api-error.ts";

/**
 * `Idempotency-Key` on the admin API's POSTs (IETF draft "The Idempotency-Key HTTP Header
 * Field"): a client that sends the same key again (a retry after a timeout, a double click) gets
 * the first request's answer again instead of a second batch, a second advance, a second cancel.
 *
 * Claim → act → store: the key is claimed in a committed row before the handler runs (a second
 * request with the key sees the claim at once: 409 while in flight), the handler's success answer
 * is stored on the row (a retry replays it, with `Idempotent-Replayed: true`), and a failure
 * (4xx or 5xx) releases the key, so a corrected retry acts. The store is not the handler's own
 * transaction (handlers run several, and some talk to the bus first): if the process dies between
 * the handler's commit and the store, the claim stays "in progress" and is taken over after
 * {@link ABANDONED_AFTER_SECONDS}; a retry after that acts again. Keys are per caller (token
 * `sub`) and expire after {@link IDEMPOTENCY_KEY_TTL_SECONDS}.
 */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
/** 24 h, as the draft suggests: long enough for any retry, short enough to keep the table small. */
export const IDEMPOTENCY_KEY_TTL_SECONDS = 24 * 60 * 60;
/** An unfinished claim this old is taken to be abandoned (its process died mid-request). */
export const ABANDONED_AFTER_SECONDS = 10 * 60;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/** Visible ASCII only (0x21-0x7E): no spaces, control characters or non-ASCII. */
const KEY_PATTERN = /^[\x21-\x7e]+$/;
/** A claim that vanished between our two statements (its request failed): claim again. */
const CLAIM_ATTEMPTS = 3;

/** POSTs honour the header unless they opt out (a POST that writes nothing, e.g. the query preview). */
export function acceptsIdempotencyKey(operation: Operation): boolean {
  return (
    operation.access !== "public" &&
    (operation.method === "post"
      ? operation.acceptsIdempotencyKey !== false
      : operation.method === "delete" && operation.acceptsIdempotencyKey === true)
  );
}

/**
 * The key of the request, or undefined without the header. The draft makes the value a
 * structured-field string (`"abc"`); a bare token is accepted as well. 400 naming the header when
 * it is empty, too long or holds other than visible ASCII (the value is never echoed).
 */
export function idempotencyKeyOf(req: Request): string | undefined {
  const header = req.get(IDEMPOTENCY_KEY_HEADER);
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  const key =
    trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_PATTERN.test(key)) {
    throw badRequest(
      `The ${IDEMPOTENCY_KEY_HEADER} header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII ` +
        'characters (e.g. a UUID), optionally in double quotes: Idempotency-Key: "<key>"',
    );
  }
  return key;
}

/**
 * sha256 of what the request asks for besides its method and path: the query string and the
 * parsed body (JSON re-serialised, text as sent). The same key with another fingerprint is refused.
 * A member upload (csv-upload.ts) is hashed as its text, slice by slice with pauses (the same
 * digest as the whole text at once, as when it was one string).
 */
export async function requestFingerprint(req: Request, hashedPath = ""): Promise<string> {
  const queryAt = req.originalUrl.indexOf("?");
  const query = queryAt === -1 ? "" : req.originalUrl.slice(queryAt + 1);
  const hash = createHash("sha256");
  if (hashedPath !== "") hash.update(hashedPath).update("\n");
  hash.update(query).update("\n");
  const body: unknown = req.body;
  if (body instanceof CsvUpload) {
    for (const piece of body.texts()) {
      hash.update(piece);
      await loopSlicer.pause();
    }
  } else {
    hash.update(body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body));
  }
  return hash.digest("hex");
}

/**
 * Runs `act` at most once per (caller, key): see the module comment. Without the header, `act`
 * simply runs. `pathTemplate`: for a route whose path holds personal data (DELETE
 * /api/members/{key}), the template is stored (and named in a 422) instead of the path, and the
 * path goes into the fingerprint's hash, so the stored row keeps no member key.
 */
export async function runIdempotently(
  db: Db,
  req: Request,
  principal: Principal,
  act: () => Promise<AnyReply>,
  pathTemplate?: string,
): Promise<AnyReply> {
  const key = idempotencyKeyOf(req);
  if (key === undefined) return act();
  const owner = { subject: principal.subject, key, claimId: randomUUID() };
  const request =
    pathTemplate === undefined
      ? { method: req.method, path: req.path, fingerprint: await requestFingerprint(req) }
      : { method: req.method, path: pathTemplate, fingerprint: await requestFingerprint(req, req.path) };
  for (let attempt = 1; ; attempt++) {
    const claim = await claimApiIdempotencyKey(db, {
      ...owner,
      ...request,
      ttlSeconds: IDEMPOTENCY_KEY_TTL_SECONDS,
      abandonedAfterSeconds: ABANDONED_AFTER_SECONDS,
    });
    if (claim.claimed) break;
    if (claim.existing !== undefined) return answerFromExisting(claim.existing, request);
    if (attempt >= CLAIM_ATTEMPTS) throw inProgress();
  }
  let reply: AnyReply;
  try {
    reply = await act();
  } catch (error) {
    await releaseApiIdempotencyKey(db, owner);
    throw error;
  }
  if ("stream" in reply) {
    // A streamed answer cannot be stored for a replay; no POST streams today.
    await releaseApiIdempotencyKey(db, owner);
    return reply;
  }
  await completeApiIdempotencyKey(db, owner, {
    status: reply.status,
    body: reply.body,
    headers: reply.headers ?? {},
  });
  return reply;
}

function answerFromExisting(
  existing: ApiIdempotencyKey,
  request: { readonly method: string; readonly path: string; readonly fingerprint: string },
): AnyReply {
  if (
    existing.method !== request.method ||
    existing.path !== request.path ||
    existing.fingerprint !== request.fingerprint
  ) {
    throw new ApiError(
      422,
      "idempotency.key_reused",
      `This ${IDEMPOTENCY_KEY_HEADER} was already used for another request (${existing.method} ` +
        `${existing.path}${existing.path === request.path && existing.method === request.method ? " with another query or body" : ""}); ` +
        "send a new key for a new request",
    );
  }
  if (existing.status === null) throw inProgress();
  // JSON bodies round-trip through jsonb; the handler's answer is replayed exactly as first sent.
  return {
    status: existing.status as 200 | 201 | 202,
    body: existing.responseBody,
    headers: { ...existing.responseHeaders, [IDEMPOTENT_REPLAYED_HEADER]: "true" },
  };
}

function inProgress(): ApiError {
  return new ApiError(
    409,
    "idempotency.in_progress",
    `A request with this ${IDEMPOTENCY_KEY_HEADER} is still in progress; retry once it has finished`,
  );
}
