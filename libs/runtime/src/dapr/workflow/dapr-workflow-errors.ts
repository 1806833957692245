import { sanitizeErrorMessage } from "@matoolkit/domain";

// gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscode.html).
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;
const GRPC_UNKNOWN = 2;
const GRPC_UNAVAILABLE = 14;

interface GrpcErrorLike {
  readonly code?: unknown;
  readonly details?: unknown;
  readonly message?: unknown;
}

/**
 * The sidecar has no instance by that id. Runtimes before Dapr 1.15 answer a lookup of an unknown
 * id with UNKNOWN "no such instance exists" instead of "exists: false" (dapr/dapr#7824), so the
 * message is recognised as well as the status code.
 */
export function isInstanceNotFound(error: unknown): boolean {
  return hasCode(error, GRPC_NOT_FOUND) || mentions(error, "no such instance exists");
}

/**
 * The sidecar refused to start an instance because one with that id exists. Newer runtimes answer
 * ALREADY_EXISTS (dapr/dapr#10153); older ones UNKNOWN "an active workflow with ID '…' already
 * exists".
 */
export function isInstanceAlreadyExists(error: unknown): boolean {
  return hasCode(error, GRPC_ALREADY_EXISTS) || mentions(error, "already exists");
}

/**
 * A state lookup that may succeed when asked again. daprd before 1.18.3 reads an instance's
 * metadata and its history/inbox keys in separate store reads, and while the instance is being
 * saved a lookup can see the new metadata before the keys it names: UNKNOWN "inbox key … declared
 * in metadata … but missing from state store (transient store read failure or partial save?)",
 * seen here on daprd 1.18.1 with Redis state. UNAVAILABLE is the sidecar restarting.
 */
export function isTransientLookupFailure(error: unknown): boolean {
  return (
    hasCode(error, GRPC_UNAVAILABLE) ||
    (hasCode(error, GRPC_UNKNOWN) &&
      (mentions(error, "missing from state store") || mentions(error, "transient")))
  );
}

/** A sidecar call that failed, named by what we asked and of which instance, without payloads. */
export class DaprWorkflowCallError extends Error {
  constructor(
    readonly operation: string,
    readonly instanceId: string,
    cause: unknown,
  ) {
    super(`Dapr workflow ${operation} of instance ${instanceId} failed: ${describe(cause)}`);
    this.name = "DaprWorkflowCallError";
  }
}

function describe(error: unknown): string {
  // grpc-js puts the status in the message ("6 ALREADY_EXISTS: …").
  return sanitizeErrorMessage(error instanceof Error ? error.message : String(error));
}

function hasCode(error: unknown, code: number): boolean {
  return error !== null && typeof error === "object" && (error as GrpcErrorLike).code === code;
}

function mentions(error: unknown, text: string): boolean {
  if (error === null || typeof error !== "object") return false;
  const { details, message } = error as GrpcErrorLike;
  return [details, message].some((value) => typeof value === "string" && value.includes(text));
}
