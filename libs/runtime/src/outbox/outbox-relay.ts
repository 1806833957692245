import { claimOutboxBatch, deleteOutbox, OUTBOX_CHANNEL } from "@matoolkit/db";
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
  readonly failure?: unknown;
}

/**
 * Transactional outbox relay: services write messages to `outbox` in the transaction that
 * changes their state; this moves them to the bus. Each pass locks a batch in id order
 * (`claimOutboxBatch`, `FOR UPDATE SKIP LOCKED`: several relays share the work, none publishes a
 * row another holds), publishes the whole batch with ONE `publishMany`, deletes it and commits.
 * A failed publishMany leaves every row of the pass for the next one (the bus's all-or-nothing:
 * what did go out is dropped as a duplicate when published again). A crash after publishing but
 * before the commit publishes those rows again: at-least-once, and the bus drops the copies by
 * message id within its dedupe window. The SQL on `outbox` is libs/db's (outbox.repository.ts).
 * The embedded bus publishes in a transaction of its own while the pass holds its rows: the
 * pool behind `db` needs at least two connections per relay.
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

  const pass = (): Promise<PassResult> =>
    db.transaction().execute(async (trx) => {
      // The service's handle, typed loosely here (AnyKysely); the outbox functions run raw SQL
      // that holds on any handle to the service's database.
      const outbox = trx as unknown as Db;
      const rows = await claimOutboxBatch(outbox, batchSize);
      const ids: number[] = [];
      const messages: OutgoingMessage[] = [];
      for (const raw of rows) {
        const row = outboxRowSchema.safeParse(raw);
        if (!row.success) {
          // Publishing it can never succeed; failing the batch would block every later message.
          // It stays in the table for an operator, skipped at every pass.
          logger.error(
            { outboxId: (raw as { id?: unknown }).id, issues: row.error.issues.length },
            "unreadable outbox row skipped",
          );
          continue;
        }
        ids.push(Number(row.data.id));
        messages.push(toOutgoingMessage(row.data));
      }
      if (messages.length === 0) return { published: 0 };
      try {
        await bus.publishMany(messages);
      } catch (error) {
        return { published: 0, failure: error };
      }
      await deleteOutbox(outbox, ids);
      return { published: ids.length };
    });

  const drain = async (): Promise<void> => {
    for (;;) {
      const result = await pass();
      if (result.failure !== undefined) throw result.failure;
      if (result.published === 0) return;
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
