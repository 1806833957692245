import type { SourceRow } from "../source/source-rows.ts";

export interface SourceStream {
  /** Every row, the first one included; pulled by the sync as it stages. */
  readonly rows: AsyncIterable<SourceRow>;
  /** Stops the source if the sync ended without reading it all (cancels a running statement). */
  close(): Promise<void>;
}

/**
 * Starts the source's stream and waits for its first row (or its end) before the caller opens
 * the sync transaction: the slow part of a query (a warehouse starting, the statement running)
 * passes with no transaction open, and a source that fails at once fails before any SQL.
 */
export async function openSourceStream(source: AsyncIterable<SourceRow>): Promise<SourceStream> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* rows(): AsyncGenerator<SourceRow> {
    try {
      for (let next = first; next.done !== true; next = await iterator.next()) yield next.value;
    } finally {
      await iterator.return?.();
    }
  }
  return { rows: rows(), close: async () => void (await iterator.return?.()) };
}
