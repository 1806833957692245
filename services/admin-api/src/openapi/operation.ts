import type { DataSourceClient } from "@matoolkit/datasources";
import type { Db } from "@matoolkit/db";
import type { TenantChecker } from "@matoolkit/domain";
import type { OutboundPolicy, RetentionConfig, SecretKeyring } from "@matoolkit/platform";
import type { MessageBus } from "@matoolkit/runtime";
import type { z } from "zod";
import type { AppRole, Principal } from "../auth/index.ts";
import type { SignInConfig } from "@matoolkit/auth";
import type { ApiErrorCode } from "../http/api-error.ts";
import type { StatusOf } from "../http/problem-types.ts";
import type { Readiness } from "../http/readiness.ts";
import type { RequestLimits } from "../http/request-limits.ts";
import type { CsvUpload } from "../csv/csv-upload.ts";

/**
 * One HTTP operation of the admin API, declared once: app.ts mounts it (auth, body parsing and
 * validation with these very schemas) and openapi-document.ts describes it, so a route and its
 * description cannot drift. A handler returns its status and body instead of writing `res`,
 * which lets the compiler check the body against the response schema.
 */
export type HttpMethod = "get" | "post" | "put" | "delete";

/** Who may call: no token for `public`, read access for `read`, else that app role. */
export type Access = "public" | "read" | AppRole;

/** A code the handler can answer with; a code sent with several statuses names the one used here. */
export type ErrorSpec = ApiErrorCode | { [C in ApiErrorCode]: readonly [C, StatusOf<C>] }[ApiErrorCode];

/** What handlers work with; the same for every operation. */
export type { TenantChangeSource } from "../routes/tenant-changes.routes.ts";
import type { TenantChangeSource } from "../routes/tenant-changes.routes.ts";
import type { WorkerPacingSource } from "../routes/worker-pacing.routes.ts";

export interface ApiDeps {
  readonly db: Db;
  readonly bus: MessageBus;
  /** Runs runbooks' data source queries for the query preview. */
  readonly dataSources: DataSourceClient;
  readonly readiness: Readiness;
  /** POST /api/batches refuses an identical CSV of the same runbook within this many minutes (0: never). */
  readonly duplicateBatchWindowMinutes: number;
  /** GET /api/auth/config's answer: how clients sign in (no secrets). */
  readonly signIn: SignInConfig;
  /** The address policy webhook URLs are checked against at registration (and at each send). */
  readonly outbound: OutboundPolicy;
  /** Seals webhook secrets; undefined in apps built without one (webhook creation then fails). */
  readonly secrets: SecretKeyring | undefined;
  /** Body, row and concurrency caps (http/request-limits.ts). */
  readonly requestLimits: RequestLimits;
  /**
   * The worker's pre-flight check of its tenant, where this process runs a worker (all-in-one);
   * undefined in a process without one (POST /api/tenant/check then answers 503).
   */
  readonly tenantChecker: TenantChecker | undefined;
  /** GET /api/tenant/changes: the worker's simulated tenant's write log, when in this process. */
  readonly tenantChanges: TenantChangeSource | undefined;
  /** GET /api/worker/pacing: the pacing of this process's workers (all-in-one); undefined: none. */
  readonly workerPacing: WorkerPacingSource | undefined;
  /** MATOOLKIT_RETENTION_DAYS (0: off) and MATOOLKIT_RETENTION_MODE, for POST /api/purge. */
  readonly retention: RetentionConfig;
}

export interface ResponseSpec {
  readonly description: string;
  readonly schema: z.ZodType;
  /** Default `application/json`; anything else is sent as text. */
  readonly contentType?: string;
  /** Response headers the handler may send (documented; the handler sets them in its reply). */
  readonly headers?: Readonly<Record<string, ResponseHeaderSpec>>;
  /**
   * The handler answers `stream` (text chunks, written as they come with chunked transfer
   * encoding, honouring backpressure) instead of `body`: for answers too large to build in
   * memory (a batch report). `schema` still describes the whole text for OpenAPI.
   */
  readonly streamed?: true;
}

export interface ResponseHeaderSpec {
  readonly description: string;
  readonly schema: z.ZodType;
}
export type Responses = Readonly<Partial<Record<200 | 201 | 202, ResponseSpec>>>;

export interface BodySpec {
  /** Media type → schema of the parsed body (JSON types parsed as JSON, the rest as text). */
  readonly content: Readonly<Record<string, z.ZodType>>;
  /**
   * Bytes, e.g. "1mb" (a larger body is a 413 naming it), or MEMBER_UPLOAD_LIMIT for a member
   * upload, whose limit is configured (http/request-limits.ts).
   */
  readonly limit: string;
  /** The 400 detail when the body is missing, of another type, or invalid. */
  readonly invalid: string;
  readonly description?: string;
  /**
   * A member upload (exactly the MEMBER_UPLOAD_LIMIT routes): its text body reaches the handler as
   * a CsvUpload (bytes, decoded in slices; never one string) instead of a string. The text type's
   * schema is checked against the text's first non-blank character (CsvUpload.leadingText), so it
   * may only say that the body must not be blank.
   */
  readonly upload?: true;
}

/** Response bodies may be built from readonly values (repository rows, command results). */
type DeepReadonly<T> = T extends Date
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

export type Reply<R extends Responses> = {
  [S in keyof R & number]: R[S] extends ResponseSpec
    ? R[S] extends { readonly streamed: true }
      ? StreamReply<S>
      : {
          readonly status: S;
          readonly body: DeepReadonly<z.output<R[S]["schema"]>>;
          readonly headers?: Record<string, string>;
        }
    : never;
}[keyof R & number];

/**
 * A streamed answer: nothing is written until the handler returns it, so a handler can still
 * answer a problem (404) first; a chunk source that fails after the first byte cuts the
 * connection (the client sees a truncated response, never a complete-looking one). When the client
 * goes away, iteration stops (the iterator's `return` runs, so a generator's `finally` can
 * release what it holds).
 */
export interface StreamReply<S extends number = 200 | 201 | 202> {
  readonly status: S;
  readonly stream: AsyncIterable<string>;
  readonly headers?: Record<string, string>;
}

type OutputOf<T> = T extends z.ZodType ? z.output<T> : undefined;
type BodyOutput<B> = B extends BodySpec
  ? B extends { readonly upload: true }
    ? UploadedText<z.output<B["content"][keyof B["content"]]>>
    : z.output<B["content"][keyof B["content"]]>
  : undefined;
type UploadedText<T> = T extends string ? CsvUpload : T;

export interface OperationInput<A extends Access, P, Q, B> {
  readonly params: OutputOf<P>;
  readonly query: OutputOf<Q>;
  readonly body: BodyOutput<B>;
  /** The caller; nobody for `public` operations. */
  readonly principal: A extends "public" ? undefined : Principal;
  readonly deps: ApiDeps;
}

export interface OperationSpec<
  A extends Access,
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends BodySpec | undefined,
  R extends Responses,
> {
  readonly method: HttpMethod;
  /** OpenAPI path template, e.g. `/api/batches/{id}`. */
  readonly path: `/${string}`;
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly access: A;
  /** One field per `{name}` in the path; parsed from strings. */
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  readonly responses: R;
  /**
   * Problem codes the handler itself can answer with. Auth (401/403/503), validation (400),
   * body size and encoding (413/415) and 500 follow from the other fields.
   */
  readonly errors?: readonly ErrorSpec[];
  /**
   * POSTs honour an `Idempotency-Key` header (http/idempotency.ts); `false` for a POST that writes
   * nothing (the query preview), whose answer is not worth storing (it holds members' data);
   * `true` for a DELETE that should honour it too (DELETE /api/members/{key}: a retried erasure
   * answers as the first did, instead of "0 erased").
   */
  readonly acceptsIdempotencyKey?: boolean;
  /**
   * The path names a person (DELETE /api/members/{key}): an Idempotency-Key row stores the path
   * template and only a hash of the path (http/idempotency.ts), so no copy of the key outlives
   * the erasure by 24 hours.
   */
  readonly pathHoldsPersonalData?: true;
}

export type Handler<A extends Access, P, Q, B, R extends Responses> = (
  input: OperationInput<A, P, Q, B>,
) => Promise<Reply<R>> | Reply<R>;

/** The registry's element type: the generic parameters erased. */
export type Operation = OperationSpec<
  Access,
  z.ZodObject | undefined,
  z.ZodObject | undefined,
  BodySpec | undefined,
  Responses
> & {
  readonly handle: (input: OperationInput<Access, unknown, unknown, unknown>) => Promise<AnyReply> | AnyReply;
};

export type AnyReply =
  | {
      readonly status: 200 | 201 | 202;
      readonly body: unknown;
      readonly headers?: Record<string, string>;
    }
  | StreamReply;

/**
 * `defineOperation({ ...spec }).handle(async (input) => ({ status, body }))`. Two steps so the
 * spec's types are fixed before the handler is checked against them: its input is typed from the
 * schemas and its reply must match a declared status and that status's response schema.
 */
export function defineOperation<
  A extends Access,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends BodySpec | undefined = undefined,
  R extends Responses = Responses,
>(spec: OperationSpec<A, P, Q, B, R>) {
  return {
    handle: (handler: Handler<A, P, Q, B, R>): Operation =>
      ({ ...spec, handle: handler }) as unknown as Operation,
  };
}
