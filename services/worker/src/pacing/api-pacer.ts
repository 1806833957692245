import { isThrottlingError } from "../throttle-retry.ts";
import type { TenantClients } from "../tenant/tenant-clients.ts";
import type { AimdLimit } from "./aimd-limit.ts";
import { createInFlightGate } from "./in-flight-gate.ts";
import type { PacingClock } from "./pacing-clock.ts";

export const tenantApis = ["graph", "exchange"] as const;
export type TenantApi = (typeof tenantApis)[number];

/** One API's side of the pacing, as /metrics and the dashboard show it. */
export interface ApiPacingReading {
  readonly api: TenantApi;
  readonly inFlight: number;
  /** Calls waiting for a slot under the limit. */
  readonly waiting: number;
  /** The adaptive in-flight limit now and its configured cap; null: not capped. */
  readonly limit: { readonly current: number; readonly cap: number } | null;
  /** Calls the service answered throttled (429, or 503 with Retry-After) since the worker started. */
  readonly throttledCalls: number;
}

/** Every call of a job to one API goes through this: a slot under the limit, throttling reported. */
export interface ApiPacer {
  readonly api: TenantApi;
  call<T>(signal: AbortSignal, send: () => Promise<T>): Promise<T>;
  reading(): ApiPacingReading;
}

export interface ApiPacerOptions {
  readonly api: TenantApi;
  readonly clock: PacingClock;
  /** The adaptive in-flight limit; absent: calls are counted, never held. */
  readonly limit?: AimdLimit;
  /**
   * A call sent at `sentAt` came back throttled at `now` (the job start rate hears it too);
   * `lowered`: this API's in-flight limit decreased (once per storm: aimd-limit.ts).
   */
  readonly onThrottled: (sentAt: number, now: number, lowered: boolean) => void;
}

export function createApiPacer(options: ApiPacerOptions): ApiPacer {
  const { api, clock, limit } = options;
  const gate = createInFlightGate(() =>
    limit === undefined ? Number.POSITIVE_INFINITY : limit.current(clock.now()),
  );
  let throttledCalls = 0;
  return {
    api,
    async call(signal, send) {
      const release = await gate.acquire(signal);
      const sentAt = clock.now();
      try {
        return await send();
      } catch (error) {
        // The worker's throttle loop retries the function (throttle-retry.ts); here the answer
        // only lowers how hard the worker pushes, so the retry meets a calmer service.
        if (isThrottlingError(error)) {
          throttledCalls++;
          const now = clock.now();
          options.onThrottled(sentAt, now, limit?.throttled(sentAt, now) ?? false);
        }
        throw error;
      } finally {
        release();
      }
    },
    reading() {
      return {
        api,
        inFlight: gate.inFlight,
        waiting: gate.waiting,
        limit: limit === undefined ? null : { current: limit.current(clock.now()), cap: limit.settings.cap },
        throttledCalls,
      };
    },
  };
}

/**
 * The tenant's ports with every call paced: what functions see is unchanged (same requests,
 * same errors), so the standard library and custom functions are paced without knowing it.
 */
export function pacedTenantClients(
  clients: TenantClients,
  pacers: Readonly<Record<TenantApi, ApiPacer>>,
): TenantClients {
  return {
    graph: {
      serviceRoot: clients.graph.serviceRoot,
      request: (request, signal) => pacers.graph.call(signal, () => clients.graph.request(request, signal)),
    },
    exchange: {
      invoke: (cmdlet, parameters, signal) =>
        pacers.exchange.call(signal, () => clients.exchange.invoke(cmdlet, parameters, signal)),
    },
  };
}
