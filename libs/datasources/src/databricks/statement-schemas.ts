import { z } from "zod";

/**
 * The parts of the Databricks SQL Statement Execution API 2.0 responses this client reads
 * (docs.databricks.com/api/workspace/statementexecution). Unknown fields are ignored, so new API
 * fields never break the scheduler.
 */
export const serviceErrorSchema = z.object({
  error_code: z.string().optional(),
  message: z.string().optional(),
});

export const columnInfoSchema = z.object({
  name: z.string(),
  position: z.number().int().optional(),
  type_name: z.string().optional(),
});

/**
 * One EXTERNAL_LINKS chunk (docs: ExternalLink): `external_link` is a pre-signed cloud-storage
 * URL valid until `expiration` (<= 15 minutes), a credential in itself: never logged, never
 * sent with our token. `http_headers` must accompany the download (e.g. a decryption key).
 */
export const externalLinkSchema = z.object({
  external_link: z.string().min(1),
  expiration: z.string().optional(),
  chunk_index: z.number().int().nonnegative(),
  row_offset: z.number().int().optional(),
  row_count: z.number().int().optional(),
  http_headers: z.record(z.string(), z.string()).optional(),
  next_chunk_index: z.number().int().optional(),
  next_chunk_internal_link: z.string().optional(),
});

/** A result chunk: rows inline (INLINE) or links to them (EXTERNAL_LINKS), never both. */
export const resultDataSchema = z.object({
  chunk_index: z.number().int().optional(),
  row_offset: z.number().int().optional(),
  row_count: z.number().int().optional(),
  /** JSON_ARRAY: one array per row, every non-null value formatted as a string. */
  data_array: z.array(z.array(z.unknown())).optional(),
  /** "Currently only a single link is returned" (docs: ResultData), read as a list anyway. */
  external_links: z.array(externalLinkSchema).optional(),
  next_chunk_index: z.number().int().optional(),
  /** Path (on the workspace host) of the next chunk; absent on the last one. */
  next_chunk_internal_link: z.string().optional(),
});

/** The body of a downloaded JSON_ARRAY chunk: the same array of row arrays as `data_array`. */
export const chunkRowsSchema = z.array(z.array(z.unknown()));

export const statementResponseSchema = z.object({
  statement_id: z.string().min(1),
  status: z.object({
    /** PENDING (waiting for the warehouse), RUNNING, SUCCEEDED, FAILED, CANCELED, CLOSED. */
    state: z.string(),
    error: serviceErrorSchema.optional(),
  }),
  manifest: z
    .object({
      format: z.string().optional(),
      schema: z.object({ columns: z.array(columnInfoSchema).optional() }).optional(),
      total_chunk_count: z.number().int().optional(),
      total_row_count: z.number().int().optional(),
      truncated: z.boolean().optional(),
    })
    .optional(),
  result: resultDataSchema.optional(),
});

export type ServiceError = z.infer<typeof serviceErrorSchema>;
export type ColumnInfo = z.infer<typeof columnInfoSchema>;
export type ExternalLink = z.infer<typeof externalLinkSchema>;
export type ResultData = z.infer<typeof resultDataSchema>;
export type StatementResponse = z.infer<typeof statementResponseSchema>;

/** INLINE: rows in the API's answers, at most 25 MiB in all; EXTERNAL_LINKS: any size. */
export type Disposition = "INLINE" | "EXTERNAL_LINKS";

/** The request body of `POST /api/2.0/sql/statements`. */
export interface ExecuteStatementRequest {
  readonly statement: string;
  readonly warehouse_id: string;
  readonly wait_timeout: string;
  readonly on_wait_timeout: "CONTINUE" | "CANCEL";
  readonly format: "JSON_ARRAY";
  readonly disposition: Disposition;
  readonly row_limit?: number;
}
