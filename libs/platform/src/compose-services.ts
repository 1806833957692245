import type { BootOptions, RuntimePlatform } from "./boot-platform.ts";

/**
 * The one wiring every composition root shares: a service's single-process main.ts and
 * all-in-one's startAll start the same `ServicePart`s on one platform, in one order, and stop them
 * in the reverse order. Each service package owns its part (its `compose.ts`), so the wiring of a
 * service is written once, beside the service, and no library imports a service.
 */
export interface ServicePart<
  P extends RuntimePlatform = RuntimePlatform,
  S extends StartedService = StartedService,
> {
  readonly name: string;
  /** What the service asks of its platform (least privilege: no SQL, no relay unless used). */
  readonly needs: PlatformNeeds;
  /** Subscribes and starts serving; must not open the platform to deliveries itself. */
  start(platform: P): Promise<S>;
}

export interface StartedService {
  /** Work that must wait until the platform accepts deliveries (Dapr reads subscriptions once). */
  afterPlatformStart?(): Promise<void>;
  stop(): Promise<void>;
}

export interface PlatformNeeds {
  /** The service reads and writes the application's SQL tables. */
  readonly sql: boolean;
  /** The service commits messages to the outbox, which the relay publishes. */
  readonly outboxRelay: boolean;
  /** Dapr: the service records the worker pools' dead letters (the worker has no database). */
  readonly workerJobDeadLetters: boolean;
}

/** Boot options for a process running these parts: the union of what they need. */
export function bootOptionsFor(
  parts: readonly ServicePart<never>[],
): Pick<BootOptions, "outboxRelay" | "adoptWorkerJobDeadLetters"> & { readonly usesSql: boolean } {
  return {
    usesSql: parts.some((part) => part.needs.sql),
    outboxRelay: parts.some((part) => part.needs.outboxRelay),
    adoptWorkerJobDeadLetters: parts.some((part) => part.needs.workerJobDeadLetters),
  };
}

type StartedOf<T> = { readonly [K in keyof T]: T[K] extends ServicePart<never, infer S> ? S : never };

export interface ComposedServices<T> {
  /** Each part's started service, in the order given. */
  readonly started: StartedOf<T>;
  /** Stops the parts in reverse order, then the platform. */
  stop(): Promise<void>;
}

/**
 * Starts the parts in order on `platform`, then opens the platform to deliveries, then runs each
 * part's `afterPlatformStart`. A part failing to start stops those already started and the
 * platform, so a failed start leaves nothing running.
 */
export async function startServices<
  P extends RuntimePlatform,
  const T extends readonly ServicePart<P, StartedService>[],
>(platform: P, parts: T): Promise<ComposedServices<T>> {
  const started: StartedService[] = [];
  const stopAll = async (): Promise<void> => {
    for (const service of [...started].reverse()) await service.stop();
    await platform.stop();
  };
  try {
    for (const part of parts) started.push(await part.start(platform));
    // Every subscription is in place: open the runtime to deliveries (Dapr reads them once).
    await platform.start();
    for (const service of started) await service.afterPlatformStart?.();
  } catch (error) {
    await stopAll().catch((stopError: unknown) =>
      platform.logger.error(
        { error: stopError instanceof Error ? stopError.message : String(stopError) },
        "stopping after a failed start failed",
      ),
    );
    throw error;
  }
  return { started: started as unknown as StartedOf<T>, stop: stopAll };
}
