import express, { type Express } from "express";
import type { DataSourceClient } from "@matoolkit/datasources";
import type { Db } from "@matoolkit/db";
import type { Logger, MessageBus } from "@matoolkit/runtime";
import { authenticate, requireAuthenticated, type TokenVerifier } from "./auth/index.ts";
import { errorHandler } from "./http/api-error.ts";
import { automationRoutes } from "./routes/automation.routes.ts";
import { batchRoutes } from "./routes/batches.routes.ts";
import { runbookRoutes } from "./routes/runbooks.routes.ts";

/**
 * The admin API (000 "Admin API Internals"). Every route is behind authentication: reads need
 * any valid token, writes the Admin role (checked per route). There is no unauthenticated mode.
 */
export function createAdminApi(options: {
  db: Db;
  bus: MessageBus;
  verifier: TokenVerifier;
  logger: Logger;
  /** Runs runbooks' data source queries for the query preview. */
  dataSources: DataSourceClient;
}): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  const api = express.Router();
  api.use(authenticate(options.verifier), requireAuthenticated);
  api.use("/runbooks", runbookRoutes(options.db, options.bus));
  api.use("/runbooks", automationRoutes(options.db, options.dataSources));
  api.use("/batches", batchRoutes(options.db));
  app.use("/api", api);
  app.use((_req, res) => {
    res.status(404).json({ error: { code: "resource.not_found", message: "No such endpoint" } });
  });
  app.use(errorHandler(options.logger));
  return app;
}
