import type { TenantChecker } from "@matoolkit/domain";
import express, { type ErrorRequestHandler, type Express } from "express";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { Db } from "@matoolkit/db";
import {
  outboundPolicy,
  retentionConfigFromEnv,
  type OutboundPolicy,
  type RetentionConfig,
  type SecretKeyring,
} from "@matoolkit/platform";
import {
  httpTelemetry,
  processMetrics,
  requestTelemetryOf,
  sendMetrics,
  type Logger,
  type MessageBus,
  type Metrics,
} from "@matoolkit/runtime";
import type { TokenVerifier } from "./auth/index.ts";
import type { SignInConfig } from "@matoolkit/auth";
import { serveDashboard } from "./http/dashboard-static.ts";
import { errorHandler } from "./http/api-error.ts";
import { problemDetails, sendProblem } from "./http/problem-details.ts";
import type { Readiness } from "./http/readiness.ts";
import { dashboardPageHeaders, securityHeaders } from "./http/security-headers.ts";
import { defaultRequestLimits, type RequestLimits } from "./http/request-limits.ts";
import { adminApiOperations } from "./openapi/admin-api-operations.ts";
import { mountOperations } from "./openapi/mount-operations.ts";
import type { TenantChangeSource } from "./routes/tenant-changes.routes.ts";
import type { WorkerPacingSource } from "./routes/worker-pacing.routes.ts";

const DEFAULT_DUPLICATE_BATCH_WINDOW_MINUTES = 10;

/**
 * The admin API (000 "Admin API Internals"). Every /api route is behind authentication: reads
 * need an app role of the API (or an accepted delegated scope), writes the Operator or Admin role
 * (checked per route; Admin includes Operator). There is no unauthenticated mode. Without a token: /healthz, /readyz, the OpenAPI
 * document (/api/openapi.json) and the problem type pages (/problems/{code}).
 */
export function createAdminApi(options: {
  db: Db;
  bus: MessageBus;
  verifier: TokenVerifier;
  logger: Logger;
  /** Runs runbooks' data source queries for the query preview. */
  dataSources: DataSourceClient;
  readiness: Readiness;
  /** POST /api/batches' duplicate check (admin-api-config.ts); default 10 minutes, 0 = off. */
  duplicateBatchWindowMinutes?: number | undefined;
  /** GET /api/auth/config's answer; default local mode. */
  signIn?: SignInConfig | undefined;
  /** Webhook URLs' address policy; default: public addresses only, system DNS. */
  outbound?: OutboundPolicy | undefined;
  /** Seals webhook secrets at rest; without it webhooks cannot be created. */
  secrets?: SecretKeyring | undefined;
  /**
   * The built dashboard (services/dashboard/dist), served at `/`; default: found next to this
   * module or the bundle (dashboard-static.ts); `false`: not served.
   */
  dashboardDir?: string | false | undefined;
  /** Prometheus instruments (`GET /metrics`, request latency); default the process-wide ones. */
  metrics?: Metrics | undefined;
  /** Body, row and heavy-request caps (http/request-limits.ts); default defaultRequestLimits. */
  requestLimits?: RequestLimits | undefined;
  /** The worker's pre-flight check, when this process runs a worker (all-in-one). */
  tenantChecker?: TenantChecker | undefined;
  /** The worker's simulated tenant's write log (all-in-one); default none (GET /api/tenant/changes 404). */
  tenantChanges?: TenantChangeSource | undefined;
  /** The pacing of this process's workers (all-in-one); default none (GET /api/worker/pacing: no workers). */
  workerPacing?: WorkerPacingSource | undefined;
  /** POST /api/purge's policy (MATOOLKIT_RETENTION_*); default 90 days, scrub. */
  retention?: RetentionConfig | undefined;
}): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  // First, so every answer (errors and 404s included) is never sniffed, cached or framed.
  app.use(securityHeaders);
  const metrics = options.metrics ?? processMetrics();
  // Prometheus text without a token, like /healthz (scrapers carry none; no member data in it).
  // Middleware, not an operation: it is not JSON, so it stays out of the OpenAPI document; and
  // before the telemetry below, so scrapes are neither traced nor counted as API requests.
  app.use((req, res, next) => {
    if (req.method !== "GET" || req.path !== "/metrics") return next();
    sendMetrics(metrics, res).catch(next);
  });
  // Then: request id (X-Request-Id, in logs and problem bodies), server span, latency histogram.
  app.use(httpTelemetry({ logger: options.logger, metrics }));
  const { db, bus, dataSources, readiness } = options;
  const operations = express.Router();
  mountOperations(operations, adminApiOperations(), {
    verifier: options.verifier,
    deps: {
      db,
      bus,
      dataSources,
      readiness,
      duplicateBatchWindowMinutes:
        options.duplicateBatchWindowMinutes ?? DEFAULT_DUPLICATE_BATCH_WINDOW_MINUTES,
      signIn: options.signIn ?? { mode: "local" },
      outbound: options.outbound ?? outboundPolicy(),
      secrets: options.secrets,
      requestLimits: options.requestLimits ?? defaultRequestLimits,
      tenantChecker: options.tenantChecker,
      tenantChanges: options.tenantChanges,
      workerPacing: options.workerPacing,
      retention: options.retention ?? retentionConfigFromEnv({}),
    },
  });
  // Every route is an operation of the registry, so the OpenAPI document describes all of them
  // (openapi.test.ts fails on a route mounted here outside it).
  app.use(operations);
  // The dashboard's files and its SPA fallback: plain middleware after the operations, so no
  // /api path (and no route of the registry) is ever answered with the dashboard.
  if (options.dashboardDir !== false) {
    const pageHeaders = dashboardPageHeaders(options.signIn ?? { mode: "local" });
    app.use(serveDashboard(options.dashboardDir, pageHeaders));
  }
  app.use((_req, res) => {
    sendProblem(res, problemDetails("resource.not_found", "No such endpoint"));
  });
  // The request's own logger (with its requestId) logs what failed.
  const onError: ErrorRequestHandler = (error, req, res, next) =>
    errorHandler(requestTelemetryOf(res.locals, options.logger).logger)(error, req, res, next);
  app.use(onError);
  return app;
}
