import { claimOutboxBatch, deleteOutbox, OUTBOX_CHANNEL, takeOutboxBatch } from "@matoolkit/db";
import type { DatabasePassword, Db } from "@matoolkit/db";
import type { Logger } from "../logger.ts";
import { startPgListener } from "../pg-listener.ts";
import type { PgListener } from "../pg-listener.ts";
import type { MessageBus, OutgoingMessage } from "../ports/index.ts";
import { outboxRowSchema, toOutgoingMessage } from "./outbox-row.ts";
import type { AnyKysely } from "../any-kysely.ts";

/** Sent (by the enqueue, in the same transaction) when rows are added to the outbox. */
export const outboxNotifyChannel = OUTBOX_CHANNEL;

export interface OutboxRelayOptions {
  readonly db: AnyKysely;
  readonly bus: MessageBus;
  readonly logger: Logger;
  /** For the LISTEN connection; without it the relay only polls. */
  readonly connectionString?: string;
  /** With connectionString: asked at each connection instead of the URL's password. */
  readonly password?: DatabasePassword;
  /** Safety-net poll (a lost notification, a row left by a failed publish). */
  readonly pollIntervalMs?: number;
  /** Rows locked and published (one `publishMany`) per transaction; 500 by default. */
  readonly batchSize?: number;
  /**
   * Nothing is published before this resolves (a rejection counts too: the bus then reports its
   * own errors): on Dapr, until the sidecar subscribed this app's topics, or a broker such as
   * RabbitMQ drops what has no subscription yet (dapr/wait-for-subscriptions.ts). Rows wait in
   * the table meanwhile; stop() does not wait for it.
   */
  readonly publishAfter?: Promise<unknown>;
}

export interface OutboxRelay {
  /** Waits for the current pass, stops polling and listening. */
  stop(): Promise<void>;
  /** Drains until the outbox is empty (rows locked by another relay excepted); throws if a publish fails. */
  flush(): Promise<void>;
}

interface PassResult {
  readonly published: number;
  /** Rows the pass found (published or skipped as unreadable): fewer than a batch, none left. */
  readonly found: number;
  readonly failure?: unknown;
}

/** Rolls a pass's transaction back: its rows go back to the table. */
class PassRolledBack extends Error {
  constructor(
    readonly reason: "publish-failed" | "unreadable-row",
    readonly failure?: unknown,
  ) {
    super(`outbox pass rolled back: ${reason}`);
  }
}

/**
 * Transactional outbox relay: services write messages to `outbox` in the transaction that
 * changes their state; this moves them to the bus. Each pass takes a batch out of the table in id
 * order (`takeOutboxBatch`: one `DELETE … RETURNING` of rows locked `FOR UPDATE SKIP LOCKED`, so
 * several relays share the work and none publishes a row another holds), publishes it with ONE
 * `publishMany`, and commits. A failed publishMany rolls the pass back: every row of it stays for
 * the next one (the bus's all-or-nothing: what did go out is dropped as a duplicate when published
 * again). A crash after publishing but before the commit publishes those rows again:
 * at-least-once, and the bus drops the copies by message id within its dedupe window. A row that
 * cannot be read rolls the pass back too, and that pass runs again the long way (claim, publish
 * the readable rows, delete those): the unreadable row stays in the table for an operator. A
 * drain stops after a pass that found less than a batch: rows committed since then come with
 * their NOTIFY, which queues the next drain (the poll is the safety net for a lost one). The SQL
 * on `outbox` is libs/db's (outbox.repository.ts). The embedded bus publishes in a transaction
 * of its own while the pass holds its rows: the pool behind `db` needs at least two connections
 * per relay.
 *
 * Issue 29: on Dapr every job message goes through here, and a pass was four statements (begin,
 * claim, delete, commit) plus an empty pass of three to end each drain; now three, and none.
 */
export async function startOutboxRelay(options: OutboxRelayOptions): Promise<OutboxRelay> {
  const { db, bus, logger } = options;
  const batchSize = options.batchSize ?? 500;
  let stopped = false;
  // Passes of this process run one after another, so flush() never returns while a background
  // pass still holds rows it has not published yet.
  let releaseOnStop!: () => void;
  const stopping = new Promise<void>((resolve) => (releaseOnStop = resolve));
  let queue: Promise<unknown> =
    options.publishAfter === undefined
      ? Promise.resolve()
      : Promise.race([options.publishAfter, stopping]).catch(() => undefined);
  let backgroundQueued = false;

  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work);
    queue = result.catch(() => {});
    return result;
  };

  /** A batch's rows as messages, and the ids of those that cannot be read. */
  const readRows = (rows: readonly unknown[]) => {
    const ids: number[] = [];
    const messages: OutgoingMessage[] = [];
    const unreadable: unknown[] = [];
    for (const raw of rows) {
      const row = outboxRowSchema.safeParse(raw);
      if (!row.success) {
        unreadable.push((raw as { id?: unknown }).id);
        continue;
      }
      ids.push(Number(row.data.id));
      messages.push(toOutgoingMessage(row.data));
    }
    return { ids, messages, unreadable };
  };

  /** The usual pass: the rows taken out of the table, published, committed. */
  const takeAndPublish = (): Promise<PassResult> =>
    db.transaction().execute(async (trx) => {
      // The service's handle, typed loosely here (AnyKysely); the outbox functions run raw SQL
      // that holds on any handle to the service's database.
      const rows = await takeOutboxBatch(trx as unknown as Db, batchSize);
      const { messages, unreadable } = readRows(rows);
      if (unreadable.length > 0) throw new PassRolledBack("unreadable-row");
      if (messages.length > 0) {
        try {
          await bus.publishMany(messages);
        } catch (error) {
          throw new PassRolledBack("publish-failed", error);
        }
      }
      return { published: messages.length, found: rows.length };
    });

  /** A pass over a batch holding an unreadable row: those stay, the others are published. */
  const claimPublishAndDelete = (): Promise<PassResult> =>
    db.transaction().execute(async (trx) => {
      const outbox = trx as unknown as Db;
      const rows = await claimOutboxBatch(outbox, batchSize);
      const { ids, messages, unreadable } = readRows(rows);
      // Publishing one can never succeed; failing the batch would block every later message.
      // It stays in the table for an operator, skipped at every pass.
      for (const outboxId of unreadable) logger.error({ outboxId }, "unreadable outbox row skipped");
      if (messages.length === 0) return { published: 0, found: rows.length };
      try {
        await bus.publishMany(messages);
      } catch (error) {
        return { published: 0, found: rows.length, failure: error };
      }
      await deleteOutbox(outbox, ids);
      return { published: ids.length, found: rows.length };
    });

  const pass = async (): Promise<PassResult> => {
    try {
      return await takeAndPublish();
    } catch (error) {
      if (!(error instanceof PassRolledBack)) throw error;
      if (error.reason === "publish-failed") return { published: 0, found: 0, failure: error.failure };
      return claimPublishAndDelete();
    }
  };

  const drain = async (): Promise<void> => {
    for (;;) {
      const result = await pass();
      if (result.failure !== undefined) throw result.failure;
      // Less than a batch: the pass took every row it could see (unreadable ones stay for good).
      if (result.published === 0 || result.found < batchSize) return;
    }
  };

  const kick = (): void => {
    if (stopped || backgroundQueued) return;
    backgroundQueued = true;
    exclusive(async () => {
      backgroundQueued = false;
      if (!stopped) await drain();
    }).catch((error: unknown) =>
      logger.warn({ err: error }, "outbox relay pass failed; retrying at the next poll"),
    );
  };

  const poll = setInterval(kick, options.pollIntervalMs ?? 1000);
  poll.unref();
  let listener: PgListener | undefined;
  if (options.connectionString !== undefined) {
    listener = await startPgListener({
      connectionString: options.connectionString,
      ...(options.password === undefined ? {} : { password: options.password }),
      channel: outboxNotifyChannel,
      logger,
      applicationName: "matoolkit-outbox-listen",
      onNotification: kick,
      onReconnect: kick,
    });
  }
  kick();

  return {
    async stop() {
      stopped = true;
      releaseOnStop();
      clearInterval(poll);
      await listener?.close();
      await queue;
    },
    flush: () => exclusive(drain),
  };
}
