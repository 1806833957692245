/** The `ResultType` names of 000 message 8, as the PowerShell worker reports them. */
export const workerResultTypes = ["Object", "Boolean", "String", "Number", "Null", "Array"] as const;
export type WorkerResultType = (typeof workerResultTypes)[number];

export interface WireResult {
  readonly Result: unknown;
  readonly ResultType: WorkerResultType;
}

/**
 * Turns a function's return value into what goes on the wire: a JSON round trip (undefined →
 * null, Date → ISO string, NaN → null, as JSON.stringify would send it) so that ResultType
 * describes exactly what the orchestrator will read. Throws for values JSON cannot carry
 * (BigInt, cycles): the caller reports those as a failed job.
 */
export function toWireResult(value: unknown): WireResult {
  const json = JSON.stringify(value);
  const Result: unknown = json === undefined ? null : JSON.parse(json);
  return { Result, ResultType: resultTypeOf(Result) };
}

function resultTypeOf(value: unknown): WorkerResultType {
  if (value === null) return "Null";
  if (Array.isArray(value)) return "Array";
  const kind = typeof value;
  switch (kind) {
    case "object":
      return "Object";
    case "boolean":
      return "Boolean";
    case "string":
      return "String";
    case "number":
      return "Number";
    // A JSON round trip yields none of these; listed so the switch stays exhaustive.
    case "undefined":
    case "bigint":
    case "symbol":
    case "function":
      throw new Error(`Unexpected ${kind} after JSON round trip`);
    default: {
      const unreachable: never = kind;
      throw new Error(`Unknown typeof ${String(unreachable)}`);
    }
  }
}
