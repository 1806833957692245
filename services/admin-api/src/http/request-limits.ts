import { z } from "zod";

/**
 * Bounded work per request (issue 25): how much one request may make the server read, parse and
 * hold. A 45 MB CSV plan held the event loop for 20 s and took 600 MB; in `npm start` the
 * orchestrator and the worker share that loop, so one Operator stalled every batch. The caps are
 * read from the environment at the service edge (admin-api-config.ts) and checked before any
 * work: the body's bytes (413), its member rows (400), and how many heavy requests one caller and
 * the whole server run at once (429 with Retry-After).
 */
export interface RequestLimits {
  /** Bytes of a member upload body: CSV of plan, batch create and member add; JSON member rows. */
  readonly memberUploadBytes: number;
  /** Member rows of one upload (CSV data rows or JSON `members`). */
  readonly memberRows: number;
  /** Heavy requests (the route table below) one caller may have running at once. */
  readonly heavyPerCaller: number;
  /** Heavy requests the whole server runs at once, all callers together (memory stays bounded). */
  readonly heavyTotal: number;
}

/**
 * 20 MB holds ~100,000 members of a dozen columns (a migration wave is rarely a tenth of that);
 * the rows cap keeps a file of short rows from holding more. Two heavy requests per caller let a
 * plan run beside an upload; four in all bound memory to a few hundred MB.
 */
export const defaultRequestLimits: RequestLimits = {
  memberUploadBytes: 20 * 1024 * 1024,
  memberRows: 100_000,
  heavyPerCaller: 2,
  heavyTotal: 4,
};

/** The environment variable that sets each limit (named in the errors, so a user knows what to raise). */
export const requestLimitVariables = {
  memberUploadBytes: "MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES",
  memberRows: "MATOOLKIT_MAX_MEMBER_ROWS",
  heavyPerCaller: "MATOOLKIT_HEAVY_REQUESTS_PER_CALLER",
  heavyTotal: "MATOOLKIT_HEAVY_REQUESTS_TOTAL",
} as const satisfies Record<keyof RequestLimits, string>;

const count = (max: number) => z.coerce.number().int().min(1).max(max);
export const requestLimitsSchema = z.object({
  memberUploadBytes: count(1024 * 1024 * 1024).default(defaultRequestLimits.memberUploadBytes),
  memberRows: count(10_000_000).default(defaultRequestLimits.memberRows),
  heavyPerCaller: count(1000).default(defaultRequestLimits.heavyPerCaller),
  heavyTotal: count(1000).default(defaultRequestLimits.heavyTotal),
});

/**
 * An operation's declared body limit (BodySpec.limit) for a member upload: memberUploadBytes,
 * configured at the service edge, instead of a fixed size.
 */
export const MEMBER_UPLOAD_LIMIT = "member upload limit (MATOOLKIT_MAX_MEMBER_UPLOAD_BYTES)";

/**
 * The route table: which operations are heavy (they parse a member upload or stream a whole
 * batch) and take a member upload body. Every other body keeps the fixed limit its operation
 * declares (1 MB for a runbook, 256 kB or 16 kB for the small JSON bodies).
 */
export interface RouteLimit {
  /** Counted against the caller's and the server's heavy-request slots. */
  readonly heavy: true;
  /** The body is a member upload: memberUploadBytes and memberRows apply. */
  readonly memberUpload?: true;
}

export const routeLimits: Readonly<Record<string, RouteLimit>> = {
  planRunbook: { heavy: true, memberUpload: true },
  createBatch: { heavy: true, memberUpload: true },
  addBatchMembers: { heavy: true, memberUpload: true },
  // Streamed 500 members at a time, but it holds a connection and the database for the whole batch.
  getBatchReport: { heavy: true },
};

/** "POST /api/runbooks/{name}/plan": how an error names the route whose limit applies. */
export function routeName(operation: { readonly method: string; readonly path: string }): string {
  return `${operation.method.toUpperCase()} ${operation.path}`;
}

/** 20971520 → "20 MB"; 1536 → "1.5 kB": binary units, as body-parser counts them. */
export function formatBytes(bytes: number): string {
  const units = ["bytes", "kB", "MB", "GB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = unit === 0 ? String(value) : String(Math.round(value * 10) / 10);
  return `${shown} ${units[unit]}`;
}

export const formatCount = (value: number): string => value.toLocaleString("en-US");

/** The member rows one upload to a route may hold; the reader refuses more (tooManyRows). */
export interface RowLimit {
  readonly max: number;
  /** routeName() of the route, for the error. */
  readonly route: string;
}

export function rowLimitOf(limits: RequestLimits, route: string): RowLimit {
  return { max: limits.memberRows, route };
}
