// A runbook's source rows as members of batches: validation, staging and the query preview. Shared
// by the scheduler (its ticks stage rows) and the admin API (the preview stages and rolls back),
// so the admin API does not depend on the scheduler service.
export { parseBatchTime, roundToFiveMinutes } from "./batch-time.ts";
export { previewRunbookQuery, type PreviewBatch, type QueryPreview } from "./preview-query.ts";
export { SourceRowError } from "./source-row-error.ts";
export { toSourceRows, type SourceRow, type SourceRowPreview } from "./source-rows.ts";
export { stageRows, type StagedRows, type StageOptions } from "./stage-rows.ts";
