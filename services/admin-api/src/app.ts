import express, { type Express } from "express";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { Db } from "@matoolkit/db";
import type { Logger, MessageBus } from "@matoolkit/runtime";
import type { TokenVerifier } from "./auth/index.ts";
import { errorHandler } from "./http/api-error.ts";
import { problemDetails, sendProblem } from "./http/problem-details.ts";
import type { Readiness } from "./http/readiness.ts";
import { adminApiOperations } from "./openapi/admin-api-operations.ts";
import { mountOperations } from "./openapi/mount-operations.ts";

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
}): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
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
    },
  });
  // Every route is an operation of the registry, so the OpenAPI document describes all of them
  // (openapi.test.ts fails on a route mounted here outside it).
  app.use(operations);
  app.use((_req, res) => {
    sendProblem(res, problemDetails("resource.not_found", "No such endpoint"));
  });
  app.use(errorHandler(options.logger));
  return app;
}
