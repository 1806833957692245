/**
 * Knobs of the Entra functions. Only the replication grace exists: Entra ID serves reads from
 * replicas, so an object created a moment ago (by an earlier step, or by this step's previous
 * attempt) can answer 404 for a few seconds. A function that reads such an object re-reads it
 * for up to `replicationGraceMs` before it reports `graph.not_found`, which is permanent.
 */
export interface EntraFunctionOptions {
  /** How long "not found" may be replication lag (default 10 s). Tests shorten it. */
  readonly replicationGraceMs?: number;
}

export interface EntraSettings {
  readonly replicationGraceMs: number;
}

export function entraSettings(options: EntraFunctionOptions = {}): EntraSettings {
  const replicationGraceMs = options.replicationGraceMs ?? 10_000;
  if (!(replicationGraceMs >= 0)) throw new RangeError("replicationGraceMs must be >= 0");
  return { replicationGraceMs };
}
