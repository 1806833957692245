import { NonRetriableError, reasonCodes, type TenantChecker } from "@matoolkit/domain";
import type { RuntimePlatform, ServicePart, StartedService } from "@matoolkit/platform";
import type { TenantChangeLog } from "./tenant/simulated-tenant-changes.ts";
import type { GraphClient } from "./tenant/graph-client.ts";
import { tenantConfigFromEnv } from "./tenant/tenant-config.ts";
import type { WorkerPacingReading } from "./pacing/worker-pacing.ts";
import { pacingSettingsOf, workerConfigFromEnv } from "./worker-config.ts";
import { buildWorkerRuntime } from "./worker-runtime.ts";
import { startWorkerService } from "./worker-service.ts";

export interface StartedWorker extends StartedService {
  /** The worker's target tenant, safe to show (e.g. the simulated tenant's URL). */
  readonly tenantDescription: string;
  /** The pre-flight check of the worker's tenant. */
  readonly checkTenant: TenantChecker;
  /** What a simulated tenant wrote (`GET /api/tenant/changes` in all-in-one); undefined otherwise. */
  readonly tenantChangeLog: TenantChangeLog | undefined;
}

/** A worker pool's pacing now, for a service of the same process (GET /api/worker/pacing). */
export interface WorkerPacingReport extends WorkerPacingReading {
  readonly workerId: string;
}

export interface WorkerPart extends ServicePart<RuntimePlatform, StartedWorker> {
  /**
   * The started worker's pre-flight check, for a service of the same process (all-in-one gives
   * it to the admin API); before the worker started, it fails saying so.
   */
  readonly checkTenant: TenantChecker;
  /** The started worker's pacing; none before it started or after it stopped. */
  readonly pacing: () => readonly WorkerPacingReport[];
  /**
   * The started worker's tenant Graph client, for a service of the same process (all-in-one's
   * orchestrator mails notifications with it); undefined before it started or after it stopped.
   */
  readonly tenantGraph: () => GraphClient | undefined;
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
): WorkerPart {
  workerConfigFromEnv(env);
  tenantConfigFromEnv(env);
  let started: TenantChecker | undefined;
  let pacing: (() => WorkerPacingReport) | undefined;
  let graph: GraphClient | undefined;
  return {
    name: "worker",
    checkTenant: (request, signal) => {
      if (started === undefined) {
        throw new NonRetriableError(
          reasonCodes.tenantNotConfigured,
          "The worker of this process has not started",
        );
      }
      return started(request, signal);
    },
    pacing: () => (pacing === undefined ? [] : [pacing()]),
    tenantGraph: () => graph,
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
          pacing: pacingSettingsOf(config),
          ...(onIdle === undefined
            ? {}
            : {
                idleExitMs: runtime.idleExitMs,
                onIdle: () => onIdle(`idle for ${config.idleExitSeconds}s`),
              }),
        });
        started = runtime.checkTenant;
        graph = runtime.tenant.graph;
        pacing = () => ({ workerId: config.workerId, ...worker.pacing() });
        return {
          tenantDescription: runtime.tenantDescription,
          checkTenant: runtime.checkTenant,
          tenantChangeLog: runtime.tenantChangeLog,
          stop: async () => {
            started = undefined;
            pacing = undefined;
            graph = undefined;
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
