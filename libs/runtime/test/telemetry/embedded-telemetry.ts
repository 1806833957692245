import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { createEmbeddedRuntime, type EmbeddedRuntime } from "../../src/embedded/create-embedded-runtime.ts";
import type { Logger } from "../../src/logger.ts";
import type { MessageBus } from "../../src/ports/index.ts";
import { startTelemetry, type Telemetry, type TelemetryConfig } from "../../src/telemetry/start-telemetry.ts";

/** Test support: what the platform boot sets up for telemetry, on the embedded runtime. */
export interface EmbeddedTelemetry {
  readonly database: TestDatabase;
  readonly runtime: EmbeddedRuntime;
  readonly telemetry: Telemetry;
  /** The runtime's bus instrumented as the platform instruments it. */
  readonly bus: MessageBus;
  /** Stops the runtime and telemetry, then drops the database. */
  stop(): Promise<void>;
}

/**
 * A database of the test's own, the embedded runtime on it (polling every 100 ms), and
 * `startTelemetry` with `config` (service `test`). Readiness is the caller's (`readyWhen`).
 */
export async function startEmbeddedTelemetry(
  config: TelemetryConfig,
  logger: Logger,
): Promise<EmbeddedTelemetry> {
  const database = await createTestDatabase();
  let runtime: EmbeddedRuntime | undefined;
  let telemetry: Telemetry;
  try {
    runtime = await createEmbeddedRuntime({
      connectionString: database.url,
      db: database.db,
      logger,
      pollingIntervalSeconds: 0.1,
    });
    telemetry = await startTelemetry({ config, service: "test", logger });
  } catch (error) {
    await runtime?.stop();
    await database.drop();
    throw error;
  }
  return {
    database,
    runtime,
    telemetry,
    bus: telemetry.instrumentBus(runtime.bus, "embedded"),
    async stop() {
      await runtime.stop();
      await telemetry.stop();
      await database.drop();
    },
  };
}
