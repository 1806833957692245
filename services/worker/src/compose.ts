import type { RuntimePlatform, ServicePart, StartedService } from "@matoolkit/platform";
import { tenantConfigFromEnv } from "./tenant/tenant-config.ts";
import { workerConfigFromEnv } from "./worker-config.ts";
import { buildWorkerRuntime } from "./worker-runtime.ts";
import { startWorkerService } from "./worker-service.ts";

export interface StartedWorker extends StartedService {
  /** The worker's target tenant, safe to show (e.g. the simulated tenant's URL). */
  readonly tenantDescription: string;
}

/**
 * One worker pool (WorkerId) as its main.ts and all-in-one start it. It needs the bus and the
 * idempotency store, no SQL tables and no outbox: on Dapr its platform opens no database at all
 * (000: the worker has no SQL access); embedded, both ports live in PostgreSQL.
 * Configuration is read here, before any database or tenant is touched.
 */
export function workerPart(
  env: Record<string, string | undefined>,
  options: {
    /** 000 "Scale-to-Zero": called once idle for MATOOLKIT_WORKER_IDLE_EXIT_SECONDS; absent: never. */
    readonly onIdle?: (reason: string) => void;
  } = {},
): ServicePart<RuntimePlatform, StartedWorker> {
  workerConfigFromEnv(env);
  tenantConfigFromEnv(env);
  return {
    name: "worker",
    needs: { sql: false, outboxRelay: false, workerJobDeadLetters: false },
    async start(platform): Promise<StartedWorker> {
      // Custom functions and the tenant (an in-process simulated one with MATOOLKIT_TENANT=simulated).
      const runtime = await buildWorkerRuntime(env, platform.logger);
      const { config } = runtime;
      const { onIdle } = options;
      try {
        const worker = await startWorkerService({
          bus: platform.bus,
          idempotency: platform.idempotency,
          logger: platform.logger,
          workerId: config.workerId,
          concurrency: config.concurrency,
          jobTimeoutMs: config.jobTimeoutSeconds * 1000,
          leaseSeconds: config.leaseSeconds,
          registry: runtime.registry,
          tenant: runtime.tenant,
          ...(onIdle === undefined
            ? {}
            : {
                idleExitMs: runtime.idleExitMs,
                onIdle: () => onIdle(`idle for ${config.idleExitSeconds}s`),
              }),
        });
        return {
          tenantDescription: runtime.tenantDescription,
          stop: async () => {
            await worker.stop();
            await runtime.close();
          },
        };
      } catch (error) {
        await runtime.close();
        throw error;
      }
    },
  };
}
