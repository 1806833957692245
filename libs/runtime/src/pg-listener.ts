import { pgConnectionConfig, type DatabasePassword } from "@matoolkit/db";
import pg from "pg";
import type { Logger } from "./logger.ts";

export interface PgListenerOptions {
  readonly connectionString: string;
  readonly password?: DatabasePassword;
  readonly channel: string;
  readonly onNotification: (payload: string) => void;
  /** Called after a reconnect: notifications sent while disconnected are lost, so catch up. */
  readonly onReconnect?: () => void;
  readonly logger: Logger;
  readonly applicationName?: string;
}

export interface PgListener {
  close(): Promise<void>;
}

const firstRetryMs = 500;
const maxRetryMs = 30_000;

/**
 * One dedicated connection that LISTENs on a channel and reconnects (with backoff) when it
 * drops. Notifications only shorten latency: every user also polls, so a lost notification costs
 * at most one poll interval. The first connect fails loudly so a bad URL surfaces at start.
 */
export async function startPgListener(options: PgListenerOptions): Promise<PgListener> {
  let closed = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      ...pgConnectionConfig(options.connectionString, options.password),
      application_name: options.applicationName ?? "matoolkit-listen",
    });
    next.on("notification", (message) => {
      if (message.channel === options.channel) options.onNotification(message.payload ?? "");
    });
    // A dropped connection emits `error` and/or `end`; either way, start over on a new client.
    next.on("error", (error) => {
      if (client === next) {
        options.logger.warn(
          { err: error, channel: options.channel },
          "notification listener lost its connection",
        );
      }
      onLost(next);
    });
    next.on("end", () => onLost(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${next.escapeIdentifier(options.channel)}`);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    retryMs = firstRetryMs;
  };

  const onLost = (lost: pg.Client): void => {
    if (closed || client !== lost) return;
    client = undefined;
    lost.end().catch(() => {});
    scheduleReconnect();
  };

  const scheduleReconnect = (): void => {
    if (closed || retryTimer !== undefined) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (closed) return;
      connect()
        .then(() => options.onReconnect?.())
        .catch((error: unknown) => {
          options.logger.warn(
            { err: error, channel: options.channel },
            "notification listener reconnect failed",
          );
          retryMs = Math.min(retryMs * 2, maxRetryMs);
          scheduleReconnect();
        });
    }, retryMs);
    retryTimer.unref();
  };

  await connect();

  return {
    async close() {
      closed = true;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
