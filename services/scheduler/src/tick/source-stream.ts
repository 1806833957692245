import type { SourceRow } from "@matoolkit/commands";

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
 *
 * The rows after the first come straight from the source's iterator, not through another
 * generator: at a million rows, each layer of async generator costs a second of promises.
 */
export async function openSourceStream(source: AsyncIterable<SourceRow>): Promise<SourceStream> {
  const iterator = source[Symbol.asyncIterator]();
  let first: IteratorResult<SourceRow> | undefined = await iterator.next();
  const stop = async (): Promise<IteratorResult<SourceRow>> => {
    first = undefined;
    await iterator.return?.();
    return { done: true, value: undefined };
  };
  const rows: AsyncIterableIterator<SourceRow> = {
    next() {
      if (first === undefined) return iterator.next();
      const result = first;
      first = undefined;
      return Promise.resolve(result);
    },
    // A consumer that stops early (break, a bad row) stops the source.
    return: stop,
    [Symbol.asyncIterator]() {
      return rows;
    },
  };
  return { rows, close: async () => void (await stop()) };
}
