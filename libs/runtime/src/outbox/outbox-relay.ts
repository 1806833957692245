import { sql } from "kysely";
import type { Logger } from "../logger.ts";
import { startPgListener } from "../pg-listener.ts";
import type { PgListener } from "../pg-listener.ts";
import type { MessageBus } from "../ports/index.ts";
import { outboxRowSchema, toOutgoingMessage } from "./outbox-row.ts";
import type { AnyKysely } from "../any-kysely.ts";

/** Sent (by the enqueue, in the same transaction) when rows are added to the outbox. */
export const outboxNotifyChannel = "matoolkit_outbox";

export interface OutboxRelayOptions {
  readonly db: AnyKysely;
  readonly bus: MessageBus;
  readonly logger: Logger;
  /** For the LISTEN connection; without it the relay only polls. */
  readonly connectionString?: string;
  /** Safety-net poll (a lost notification, a row left by a failed publish). */
  readonly pollIntervalMs?: number;
  /** Rows locked and published per transaction. */
  readonly batchSize?: number;
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
 * (`FOR UPDATE SKIP LOCKED`: several relays share the work, none publishes a row another holds),
 * publishes, deletes what was published and commits. A publish failure stops the pass and
 * leaves that row and the following ones for the next pass, keeping the order. A crash after
 * publishing but before the commit publishes those rows again: at-least-once, and the bus drops
 * the copies by message id within its dedupe window.
 * The embedded bus publishes in a transaction of its own while the pass holds its rows: the
 * pool behind `db` needs at least two connections per relay.
 */
export async function startOutboxRelay(options: OutboxRelayOptions): Promise<OutboxRelay> {
  const { db, bus, logger } = options;
  const batchSize = options.batchSize ?? 100;
  let stopped = false;
  // Passes of this process run one after another, so flush() never returns while a background
  // pass still holds rows it has not published yet.
  let queue: Promise<unknown> = Promise.resolve();
  let backgroundQueued = false;

  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work);
    queue = result.catch(() => {});
    return result;
  };

  const pass = (): Promise<PassResult> =>
    db.transaction().execute(async (trx) => {
      const rows = await sql`
        SELECT id, message_id AS "messageId", topic, properties, body, deliver_at AS "deliverAt" FROM outbox
        ORDER BY id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`.execute(trx);
      const done: string[] = [];
      let failure: unknown;
      for (const raw of rows.rows) {
        const row = outboxRowSchema.safeParse(raw);
        if (!row.success) {
          // Publishing it can never succeed; stopping here would block every later message.
          // It stays in the table for an operator, skipped at every pass.
          logger.error(
            { outboxId: (raw as { id?: unknown }).id, issues: row.error.issues.length },
            "unreadable outbox row skipped",
          );
          continue;
        }
        try {
          await bus.publish(toOutgoingMessage(row.data));
          done.push(String(row.data.id));
        } catch (error) {
          failure = error;
          break;
        }
      }
      if (done.length > 0) await sql`DELETE FROM outbox WHERE id = ANY(${done}::bigint[])`.execute(trx);
      return failure === undefined ? { published: done.length } : { published: done.length, failure };
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
      clearInterval(poll);
      await listener?.close();
      await queue;
    },
    flush: () => exclusive(drain),
  };
}
