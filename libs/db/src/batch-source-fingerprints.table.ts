import type { Insertable, Selectable } from "kysely";
import type { CreatedAt } from "./column-types.ts";

/**
 * Manual batches' uploads (migration 0011): sha256 of the runbook name and the normalized CSV,
 * so an identical upload within minutes is refused as a duplicate. Kept apart from `batches` so
 * the hash never rides along in a batch row.
 */
export interface BatchSourceFingerprintsTable {
  batchId: number;
  fingerprint: string;
  createdAt: CreatedAt;
}

export type BatchSourceFingerprint = Selectable<BatchSourceFingerprintsTable>;
export type NewBatchSourceFingerprint = Insertable<BatchSourceFingerprintsTable>;
