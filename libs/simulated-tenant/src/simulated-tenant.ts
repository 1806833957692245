import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { exchangeErrorBody, graphErrorBody } from "./error-bodies.ts";
import { profileSettings, seededRandom, type SimulatorProfile, type TenantBehaviours } from "./behaviours.ts";
import { ExchangeConcurrencyThrottle, sendConcurrencyRefusal } from "./exchange/concurrency-throttle.ts";
import { exchangeRoutes } from "./exchange/exchange-routes.ts";
import { FaultInjector, type SimulatedApi, type ThrottleSettings } from "./faults.ts";
import { graphRoutes } from "./graph/graph-routes.ts";
import { adminRoutes } from "./admin-routes.ts";
import type { PrerequisiteRules } from "./prerequisite-rules.ts";
import { applySeed, parseTenantSeed, type TenantSeed, type TenantSeedInput } from "./seed.ts";
import type { SimulatorContext } from "./simulator-context.ts";
import { TenantState } from "./tenant-state.ts";
import { TenantApp } from "./tenant-app.ts";
import { appPermissionGate } from "./graph/app-permission-gate.ts";
import { tenantAppRoutes } from "./graph/tenant-app-routes.ts";
import { exchangeAppGate } from "./exchange/exchange-app-gate.ts";

export interface SimulatedTenantOptions {
  /** Defaults to 127.0.0.1: the simulator has no authentication worth the name. */
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Parsed and validated here: a plain object in the seed file's shape will do. */
  readonly seed?: TenantSeed | TenantSeedInput;
  /**
   * `chaos`: replica flapping, 404 after create and Exchange concurrency refusals (behaviours.ts).
   * Options given beside it win over what it sets. Default `default`.
   */
  readonly profile?: SimulatorProfile;
  /** A write becomes visible to reads this long after it was made (default 0, or the profile's). */
  readonly replicationDelayMs?: number;
  readonly throttle?: ThrottleSettings;
  /** Service behaviours to switch; the rest are the profile's (as the real service by default). */
  readonly behaviours?: Partial<TenantBehaviours>;
  /** Seeds every random draw (replica picks, throttling), so a chaos run can be reproduced. */
  readonly randomSeed?: number;
  /** B2B and mailbox-move prerequisites; every rule defaults to the real service's (prerequisite-rules.ts). */
  readonly prerequisites?: Partial<PrerequisiteRules>;
  readonly now?: () => number;
  readonly random?: () => number;
}

export interface SimulatedTenant {
  /** Base URL for both Graph (`${url}/v1.0`) and Exchange (`${url}/adminapi/beta/${tenantId}`). */
  readonly url: string;
  readonly tenantId: string;
  readonly state: TenantState;
  readonly faults: FaultInjector;
  /** Exchange's per-tenant concurrency refusals (arm them, count them). */
  readonly exchangeConcurrency: ExchangeConcurrencyThrottle;
  /** The worker app's grants and the tenant settings the pre-flight check reads (tenant-app.ts). */
  readonly app: TenantApp;
  /** Empties the tenant and applies the seed again (or the one given). */
  reset(seed?: TenantSeed | TenantSeedInput): void;
  close(): Promise<void>;
}

export const defaultSimulatedTenantId = "5f1c2d3e-0a1b-4c2d-8e3f-9a0b1c2d3e4f";
export const defaultSimulatedDomain = "fabrikam.example";

/**
 * Starts a simulated Microsoft 365 tenant: the Graph endpoints and Exchange Online cmdlets the
 * worker's standard functions use, over HTTP, with state, the real error shapes, throttling and
 * replication delay. The worker talks to it exactly as to a real tenant, only its base URLs
 * differ. Any non-empty bearer token is accepted; a missing one gets the real 401.
 */
export async function startSimulatedTenant(options: SimulatedTenantOptions = {}): Promise<SimulatedTenant> {
  const seed = options.seed === undefined ? undefined : parseTenantSeed(options.seed, "options");
  const profile = profileSettings(options.profile ?? "default");
  const random =
    options.random ?? (options.randomSeed === undefined ? Math.random : seededRandom(options.randomSeed));
  const state = new TenantState({
    tenantId: seed?.tenantId ?? defaultSimulatedTenantId,
    domains: seed?.domains ?? [defaultSimulatedDomain],
    replicationDelayMs: options.replicationDelayMs ?? profile.replicationDelayMs,
    now: options.now ?? Date.now,
    behaviours: { ...profile.behaviours, ...options.behaviours },
    random,
    prerequisites: options.prerequisites,
  });
  if (seed !== undefined) applySeed(state, seed);
  const faults = new FaultInjector(
    options.throttle ?? { rate: profile.throttleRate, retryAfterSeconds: 1 },
    random,
  );
  const exchangeConcurrency = new ExchangeConcurrencyThrottle(
    () => state.behaviours.exchangeConcurrencyRate,
    random,
  );
  // The invitation policy is one of the tenant's behaviours (state.behaviours.allowInvitesFrom):
  // the app's settings read and write it there, so the check and the invitations agree.
  const tenantApp = new TenantApp(state);
  if (seed?.app !== undefined) tenantApp.apply(seed.app);
  const context: SimulatorContext = { state, faults, exchangeConcurrency, app: tenantApp };
  let currentSeed = seed;
  const reset = (next?: TenantSeed | TenantSeedInput): void => {
    if (next !== undefined) currentSeed = parseTenantSeed(next, "reset");
    state.clear();
    tenantApp.reset();
    if (currentSeed !== undefined) applySeed(state, currentSeed);
    if (currentSeed?.app !== undefined) tenantApp.apply(currentSeed.app);
  };

  const app = express();
  app.disable("x-powered-by");
  app.use("/_simulator", express.json(), adminRoutes(context, reset));
  app.use(["/v1.0", "/beta"], gate("graph", context), appPermissionGate(tenantApp));
  app.use("/adminapi", gate("exchange", context));
  app.use(express.json({ limit: "1mb" }));
  app.use(graphRoutes(context));
  app.use(["/v1.0", "/beta"], tenantAppRoutes(context));
  app.use("/adminapi", exchangeAppGate(context), exchangeRoutes(context));
  app.use(notFound);
  app.use(onError);

  const server = await listen(app, options.host ?? "127.0.0.1", options.port ?? 0);
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    tenantId: state.tenantId,
    state,
    faults,
    exchangeConcurrency,
    app: tenantApp,
    reset,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Authentication, then injected throttling, in the answer shape of the API being called. */
function gate(api: SimulatedApi, { faults, exchangeConcurrency }: SimulatorContext) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const authorization = request.header("authorization") ?? "";
    if (!/^Bearer \S+/.test(authorization)) {
      response.setHeader("WWW-Authenticate", 'Bearer realm="", error="invalid_token"');
      response
        .status(401)
        .json(
          api === "graph"
            ? graphErrorBody("InvalidAuthenticationToken", "Access token is empty.")
            : exchangeErrorBody(
                "System.UnauthorizedAccessException",
                "Access token is missing or invalid.",
                "Unauthorized",
              ),
        );
      return;
    }
    const fault = faults.next(api);
    if (fault !== undefined) {
      response.setHeader("Retry-After", String(fault.retryAfterSeconds));
      const throttled = fault.status === 429;
      response
        .status(fault.status)
        .json(
          api === "graph"
            ? graphErrorBody(
                throttled ? "TooManyRequests" : "ServiceUnavailable",
                throttled ? "Too many requests." : "The service is temporarily unavailable.",
              )
            : exchangeErrorBody(
                throttled
                  ? "Microsoft.Exchange.Admin.OData.Core.ThrottlingException"
                  : "Microsoft.Exchange.Admin.OData.Core.ServiceUnavailableException",
                throttled
                  ? "The request was throttled; retry after the interval."
                  : "The service is unavailable.",
                throttled ? "TooManyRequests" : "ServiceUnavailable",
              ),
        );
      return;
    }
    if (api === "exchange" && exchangeConcurrency.next()) {
      sendConcurrencyRefusal(response);
      return;
    }
    next();
  };
}

function notFound(request: Request, response: Response): void {
  if (request.path.startsWith("/adminapi")) {
    response
      .status(404)
      .json(exchangeErrorBody("System.NotSupportedException", "Unknown endpoint.", "NotFound"));
    return;
  }
  response
    .status(400)
    .json(graphErrorBody("BadRequest", `Resource not found for the segment '${request.path}'.`));
}

function onError(error: unknown, request: Request, response: Response, _next: NextFunction): void {
  // express.json() refuses a malformed body with a 400 carrying `type`.
  const status = (error as { status?: number }).status ?? 500;
  const text = status === 400 ? "The request body is not valid JSON." : "The simulated tenant failed.";
  response
    .status(status)
    .json(
      request.path.startsWith("/adminapi")
        ? exchangeErrorBody("System.ArgumentException", text, "BadRequest")
        : graphErrorBody(status === 400 ? "BadRequest" : "InternalServerError", text),
    );
}

function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(server)));
  });
}
