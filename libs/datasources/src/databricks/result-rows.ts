import type { DataRow } from "../types.ts";
import { downloadChunk, type DownloadDeps } from "./chunk-download.ts";
import { toRow } from "./rows.ts";
import type { StatementApi } from "./statement-api.ts";
import type { ExternalLink, ResultData, StatementResponse } from "./statement-schemas.ts";

export interface ResultReader {
  readonly api: StatementApi;
  readonly statementId: string;
  readonly download: DownloadDeps;
  readonly limit?: number;
}

/** A link this close to its `expiration` is renewed before use: the download takes time too. */
const expiryMarginMs = 10_000;
/** Fresh links per chunk at most: a clock far ahead of the storage's must not loop for ever. */
const maxFreshLinks = 3;

/**
 * The rows of a SUCCEEDED statement, chunk after chunk, whatever the disposition: INLINE chunks
 * carry `data_array`, EXTERNAL_LINKS chunks a link to download. One chunk is held at a time: it
 * is parsed, yielded row by row, then dropped before the next is fetched, so memory does not
 * grow with the result.
 */
export async function* readResultRows(
  reader: ResultReader,
  response: StatementResponse,
): AsyncGenerator<DataRow> {
  const { api, download, limit } = reader;
  const columns = response.manifest?.schema?.columns ?? [];
  const hasRows = (response.manifest?.total_chunk_count ?? 0) > 0;
  // GET statement normally carries chunk 0; fetch it by index when it does not.
  let chunk: ResultData | undefined =
    response.result ?? (hasRows ? await api.chunkByIndex(reader.statementId, 0) : undefined);
  let count = 0;
  while (chunk !== undefined) {
    for await (const rows of rowArraysOf(reader, chunk)) {
      if (rows.length > 0 && columns.length === 0) throw api.fail("result has rows but no column schema");
      for (const values of rows) {
        // The consumer may take its time between rows: the deadline still ends the query.
        if (download.signal.aborted) throw download.signal.reason as Error;
        yield toRow(columns, values);
        if (limit !== undefined && ++count >= limit) return;
      }
    }
    chunk = await nextChunk(reader, chunk);
  }
}

async function* rowArraysOf(reader: ResultReader, chunk: ResultData): AsyncGenerator<unknown[][]> {
  if (chunk.data_array !== undefined) yield chunk.data_array;
  for (const link of chunk.external_links ?? []) yield await rowsBehind(reader, link);
}

/** The next pointer sits on the chunk (INLINE) or on its last link (EXTERNAL_LINKS). */
function nextChunk(reader: ResultReader, chunk: ResultData): Promise<ResultData | undefined> {
  const last = chunk.external_links?.at(-1);
  const internalLink = chunk.next_chunk_internal_link ?? last?.next_chunk_internal_link;
  if (internalLink !== undefined) return reader.api.chunk(internalLink);
  const index = chunk.next_chunk_index ?? last?.next_chunk_index;
  if (index !== undefined) return reader.api.chunkByIndex(reader.statementId, index);
  return Promise.resolve(undefined);
}

/**
 * Downloads a link's rows, renewing the link through `GET .../result/chunks/{i}` (which "can be
 * resolved and fetched multiple times", docs: Execute Statement) when it has expired by its
 * `expiration` or the storage refuses it.
 */
async function rowsBehind(reader: ResultReader, first: ExternalLink): Promise<unknown[][]> {
  let link = first;
  for (let renewals = 0; ; renewals++) {
    const mayRenew = renewals < maxFreshLinks;
    if (mayRenew && expiresSoon(link)) {
      link = await freshLink(reader, link.chunk_index);
      continue;
    }
    const download = await downloadChunk(link, reader.download);
    if ("rows" in download) return download.rows;
    if (!mayRenew) {
      throw reader.api.fail(
        `result chunk ${link.chunk_index}: the storage refused the download (HTTP ${download.refused}) even with fresh links`,
      );
    }
    link = await freshLink(reader, link.chunk_index);
  }
}

function expiresSoon(link: ExternalLink): boolean {
  const expiresAt = link.expiration === undefined ? Number.NaN : Date.parse(link.expiration);
  return !Number.isNaN(expiresAt) && expiresAt - Date.now() < expiryMarginMs;
}

async function freshLink(reader: ResultReader, chunkIndex: number): Promise<ExternalLink> {
  const chunk = await reader.api.chunkByIndex(reader.statementId, chunkIndex);
  const link = chunk.external_links?.find((candidate) => candidate.chunk_index === chunkIndex);
  if (link === undefined)
    throw reader.api.fail(`result chunk ${chunkIndex}: the API returned no external link`);
  return link;
}
