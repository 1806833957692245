import type { TenantChecker } from "@matoolkit/domain";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { Db } from "@matoolkit/db";
import type { OutboundPolicy, RetentionConfig, SecretKeyring } from "@matoolkit/platform";
import type { Logger, MessageBus } from "@matoolkit/runtime";
import { createAdminApi } from "./app.ts";
import { createReadiness } from "./http/readiness.ts";
import type { TokenVerifier } from "./auth/index.ts";
import type { SignInConfig } from "@matoolkit/auth";
import type { RequestLimits } from "./http/request-limits.ts";
import type { TenantChangeSource } from "./routes/tenant-changes.routes.ts";
import type { WorkerPacingSource } from "./routes/worker-pacing.routes.ts";

export interface AdminApiOptions {
  readonly db: Db;
  readonly bus: MessageBus;
  readonly verifier: TokenVerifier;
  readonly logger: Logger;
  /** Runs runbooks' data source queries (POST /api/runbooks/{name}/query/preview). */
  readonly dataSources: DataSourceClient;
  /**
   * Resolves once the message bus can be used (`platform.ready`); until then GET /readyz
   * answers 503. The database is checked on each probe.
   */
  readonly busReady: Promise<unknown>;
  readonly host: string;
  readonly port: number;
  /** See AdminApiConfig.duplicateBatchWindowMinutes; default 10. */
  readonly duplicateBatchWindowMinutes?: number;
  /** GET /api/auth/config's answer (signInConfigOf(authConfig)); default local mode. */
  readonly signIn?: SignInConfig;
  /** Webhook URLs' address policy (MATOOLKIT_WEBHOOK_ALLOWED_HOSTS); default public addresses only. */
  readonly outbound?: OutboundPolicy;
  /** Seals webhook secrets at rest (the secrets key, never in the database); without it webhooks cannot be created. */
  readonly secrets?: SecretKeyring;
  /** Body, row and heavy-request caps (AdminApiConfig.requestLimits); default defaultRequestLimits. */
  readonly requestLimits?: RequestLimits;
  /** The worker's pre-flight check, when this process runs a worker (all-in-one). */
  readonly tenantChecker?: TenantChecker;
  /** The worker's simulated tenant's write log, when it runs in this process (all-in-one). */
  readonly tenantChanges?: TenantChangeSource;
  /** The pacing of the workers running in this process (all-in-one). */
  readonly workerPacing?: WorkerPacingSource;
  /** MATOOLKIT_RETENTION_DAYS / MODE (POST /api/purge); default 90 days, scrub. */
  readonly retention?: RetentionConfig;
}

export interface RunningAdminApi {
  readonly url: string;
  close(): Promise<void>;
}

export async function startAdminApiService(options: AdminApiOptions): Promise<RunningAdminApi> {
  const logger = options.logger.child({ service: "admin-api" });
  const app = createAdminApi({
    db: options.db,
    bus: options.bus,
    verifier: options.verifier,
    logger,
    dataSources: options.dataSources,
    readiness: createReadiness({ db: options.db, busReady: options.busReady, logger }),
    duplicateBatchWindowMinutes: options.duplicateBatchWindowMinutes,
    signIn: options.signIn,
    outbound: options.outbound,
    secrets: options.secrets,
    requestLimits: options.requestLimits,
    tenantChecker: options.tenantChecker,
    tenantChanges: options.tenantChanges,
    workerPacing: options.workerPacing,
    retention: options.retention,
  });
  const server = await new Promise<Server>((resolveServer, reject) => {
    const listening = app.listen(options.port, options.host, () => resolveServer(listening));
    listening.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolveClose) => server.close(() => resolveClose())),
  };
}
