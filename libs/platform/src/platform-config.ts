import { azureCredentialPlanFromEnv, type AzureCredentialPlan } from "./azure-credential-plan.ts";
import { z } from "zod";

/**
 * Everything a service process needs to know about where it runs, parsed once from the
 * environment by the entry point (main.ts) and passed down. Libraries never read process.env.
 * Defaults are the embedded mode: a fresh clone needs no variable at all.
 *
 * Runtime adapters are chosen per port. MATOOLKIT_RUNTIME picks a preset, and each port's own
 * variable overrides it, so one environment can mix them (Azure Container Apps: Dapr pub/sub,
 * Service Bus delayed messages for timers, the in-process workflow engine):
 *   preset    bus       timers                  idempotency  workflow
 *   embedded  embedded  embedded                embedded     embedded
 *   dapr      dapr      dapr-jobs               dapr         dapr
 *   aca       dapr      dapr-delayed-messages   dapr         embedded
 */
export const runtimePresets = {
  embedded: { bus: "embedded", timers: "embedded", idempotency: "embedded", workflow: "embedded" },
  dapr: { bus: "dapr", timers: "dapr-jobs", idempotency: "dapr", workflow: "dapr" },
  aca: { bus: "dapr", timers: "dapr-delayed-messages", idempotency: "dapr", workflow: "embedded" },
} as const;

const daprConfigSchema = z.object({
  /** DAPR_HTTP_ENDPOINT, else http://127.0.0.1:$DAPR_HTTP_PORT (what `dapr run` sets). */
  httpEndpoint: z.url({ protocol: /^https?$/ }),
  grpcPort: z.coerce.number().int().min(1).max(65535),
  grpcHost: z.string().min(1),
  apiToken: z.string().min(1).optional(),
  appApiToken: z.string().min(1).optional(),
  /** Where this app listens for the sidecar's callbacks (subscriptions, deliveries, job triggers). */
  appPort: z.coerce.number().int().min(0).max(65535),
  appHost: z.string().min(1),
  pubsubName: z.string().min(1),
  stateStoreName: z.string().min(1),
  jobsApiVersion: z.enum(["v1.0-alpha1", "v1.0"]),
  /** publishMany through Dapr's alpha bulk publish API; false: one stable publish per message. */
  bulkPublish: z.boolean(),
});
export type DaprConfig = z.infer<typeof daprConfigSchema>;

export const platformConfigSchema = z
  .object({
    /** PostgreSQL server to use; when absent an embedded PostgreSQL runs in `<dataDir>/postgres`. */
    databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    /**
     * `password`: the URL's own (or none, trust). `entra`: passwordless, a Microsoft Entra token
     * of the managed identity (DATABASE_AUTH_CLIENT_ID) at each connection (database-token.ts).
     */
    databaseAuth: z.enum(["password", "entra"]).default("password"),
    databaseAuthClientId: z.guid("must be the managed identity's client id (a GUID)").optional(),
    /** Local state: embedded database, local signing key. */
    dataDir: z.string().min(1).default(".matoolkit"),
    embeddedPostgresPort: z.coerce.number().int().min(1024).max(65535).default(54329),
    runtime: z.enum(["embedded", "dapr", "aca"]).default("embedded"),
    bus: z.enum(["embedded", "dapr"]).optional(),
    timers: z.enum(["embedded", "dapr-jobs", "dapr-delayed-messages"]).optional(),
    idempotency: z.enum(["embedded", "dapr"]).optional(),
    workflow: z.enum(["embedded", "dapr"]).optional(),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    dedupeWindowSeconds: z.coerce.number().int().positive().default(600),
    /**
     * Connections of this process's pool. Each worker slot holds one briefly per job (claim,
     * record), the orchestrator one per result batch and per batch of retry and poll checks
     * (four at once), the relay two per pass: with the default worker concurrency, 10 made jobs
     * queue for a connection rather than for work.
     */
    databasePoolSize: z.coerce.number().int().min(2).max(500).default(30),
    /**
     * Server-side prepared statements for what a connection repeats (libs/db statement-cache.ts):
     * off only behind a transaction-pooling proxy that loses them (PgBouncer before 1.21).
     */
    databasePrepareStatements: z.stringbool().default(true),
    daprHttpEndpoint: z.string().optional(),
    daprHttpPort: z.coerce.number().int().min(1).max(65535).default(3500),
    daprGrpcPort: z.coerce.number().int().min(1).max(65535).default(50001),
    daprGrpcHost: z.string().min(1).default("127.0.0.1"),
    daprApiToken: z.string().optional(),
    appApiToken: z.string().optional(),
    daprAppPort: z.coerce.number().int().min(0).max(65535).default(3000),
    daprAppHost: z.string().min(1).default("127.0.0.1"),
    daprPubsub: z.string().min(1).default("matoolkit-pubsub"),
    daprStateStore: z.string().min(1).default("matoolkit-state"),
    daprJobsApiVersion: z.enum(["v1.0-alpha1", "v1.0"]).default("v1.0-alpha1"),
    /**
     * Dapr's bulk publish API is alpha, and Azure Container Apps does not guarantee alpha APIs
     * (learn.microsoft.com/azure/container-apps/dapr-overview, "Limitations"). Unset: off for the
     * aca runtime, on otherwise.
     */
    daprBulkPublish: z.stringbool().optional(),
    /**
     * Whether boot runs the schema migrations. Unset: yes for the embedded database and for
     * all-in-one (`migrateOnStartDefault`), no for a single service against DATABASE_URL, which then
     * only checks the schema is current (the deploy's `matoolkit migrate` step migrates).
     */
    migrateOnStart: z.stringbool().optional(),
    /** Not from the environment: the entry point's default (all-in-one: true). */
    migrateOnStartDefault: z.boolean().default(false),
    /** Not from the environment: false for a process that never opens SQL (the worker on Dapr). */
    usesSql: z.boolean().default(true),
    /** Observability (libs/runtime/src/telemetry): OpenTelemetry's standard variables. */
    otelServiceName: z.string().min(1).optional(),
    /** OTEL_SDK_DISABLED: OpenTelemetry's switch for every signal (start-telemetry.ts says what stops). */
    otelSdkDisabled: z.stringbool().default(false),
    otlpEndpoint: z.url({ protocol: /^https?$/ }).optional(),
    otlpTracesEndpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** OTLP's transport (libs/runtime/src/telemetry/tracing.ts); Container Apps' agent injects grpc. */
    otlpProtocol: z.enum(["grpc", "http/protobuf", "http/json"]).optional(),
    otlpTracesProtocol: z.enum(["grpc", "http/protobuf", "http/json"]).optional(),
    /** /healthz, /readyz and /metrics on this port for a service outside Dapr; unset = none. */
    metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
    /** Interface of that server; default every interface (a scraper in another pod reaches it). */
    metricsHost: z.string().min(1).optional(),
  })
  .transform((raw, ctx) => {
    const preset = runtimePresets[raw.runtime];
    const adapters = {
      bus: raw.bus ?? preset.bus,
      timers: raw.timers ?? preset.timers,
      idempotency: raw.idempotency ?? preset.idempotency,
      workflow: raw.workflow ?? preset.workflow,
    };
    if (adapters.bus === "dapr" && adapters.timers === "embedded") {
      ctx.addIssue({
        code: "custom",
        path: ["timers"],
        message:
          "the Dapr bus needs a Dapr timers adapter for delayed messages (dapr-jobs or dapr-delayed-messages)",
      });
    }
    if (
      raw.databaseAuth === "entra" &&
      raw.databaseUrl !== undefined &&
      new URL(raw.databaseUrl).password !== ""
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["databaseAuth"],
        message: "with entra the password is a token: remove the password from DATABASE_URL",
      });
    }
    const usesDapr = Object.values(adapters).some((adapter) => adapter !== "embedded");
    // A process without SQL tables (the worker) still needs the server when an embedded adapter
    // keeps its state in PostgreSQL next to Dapr ones: never an embedded server per replica.
    const keepsStateInSql =
      raw.usesSql ||
      adapters.bus === "embedded" ||
      adapters.timers === "embedded" ||
      adapters.idempotency === "embedded";
    // A worker on Dapr opens no database at all: DATABASE_AUTH means nothing to it.
    if (raw.databaseAuth === "entra" && raw.databaseUrl === undefined && (!usesDapr || keepsStateInSql)) {
      ctx.addIssue({
        code: "custom",
        path: ["databaseAuth"],
        message: "entra authenticates to a PostgreSQL server: set DATABASE_URL (host, database, role name)",
      });
    }
    if (usesDapr && keepsStateInSql && raw.databaseUrl === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["databaseUrl"],
        message: "Dapr adapters run the services as separate apps: set a shared PostgreSQL server",
      });
    }
    const dapr: DaprConfig = {
      httpEndpoint: raw.daprHttpEndpoint ?? `http://127.0.0.1:${raw.daprHttpPort}`,
      grpcPort: raw.daprGrpcPort,
      grpcHost: raw.daprGrpcHost,
      ...(raw.daprApiToken === undefined ? {} : { apiToken: raw.daprApiToken }),
      ...(raw.appApiToken === undefined ? {} : { appApiToken: raw.appApiToken }),
      appPort: raw.daprAppPort,
      appHost: raw.daprAppHost,
      pubsubName: raw.daprPubsub,
      stateStoreName: raw.daprStateStore,
      jobsApiVersion: raw.daprJobsApiVersion,
      bulkPublish: raw.daprBulkPublish ?? raw.runtime !== "aca",
    };
    // daprd is not the only one who can reach a port on every interface: deliveries and job
    // triggers there run steps. Dapr sends APP_API_TOKEN with each callback (ACA injects it), so
    // an app beyond loopback must check it (docs.dapr.io/operations/security/app-api-token).
    if (usesDapr && !isLoopbackHost(raw.daprAppHost) && !raw.appApiToken) {
      ctx.addIssue({
        code: "custom",
        path: ["appApiToken"],
        message: `MATOOLKIT_DAPR_APP_HOST=${raw.daprAppHost} opens the sidecar callbacks beyond this host: set APP_API_TOKEN (the sidecar's too) or listen on 127.0.0.1`,
      });
    }
    const checkedDapr = daprConfigSchema.safeParse(dapr);
    if (usesDapr && !checkedDapr.success) {
      for (const issue of checkedDapr.error.issues) {
        ctx.addIssue({ code: "custom", path: [`dapr.${String(issue.path[0])}`], message: issue.message });
      }
    }
    return {
      databaseUrl: raw.databaseUrl,
      databaseAuth: raw.databaseAuth,
      ...(raw.databaseAuthClientId === undefined ? {} : { databaseAuthClientId: raw.databaseAuthClientId }),
      dataDir: raw.dataDir,
      embeddedPostgresPort: raw.embeddedPostgresPort,
      logLevel: raw.logLevel,
      dedupeWindowSeconds: raw.dedupeWindowSeconds,
      databasePoolSize: raw.databasePoolSize,
      databasePrepareStatements: raw.databasePrepareStatements,
      migrateOnStart: raw.migrateOnStart ?? (raw.databaseUrl === undefined || raw.migrateOnStartDefault),
      usesSql: raw.usesSql,
      telemetry: {
        serviceName: raw.otelServiceName,
        sdkDisabled: raw.otelSdkDisabled,
        otlpEndpoint: raw.otlpEndpoint,
        otlpTracesEndpoint: raw.otlpTracesEndpoint,
        otlpProtocol: raw.otlpProtocol,
        otlpTracesProtocol: raw.otlpTracesProtocol,
        metricsPort: raw.metricsPort,
        metricsHost: raw.metricsHost,
      },
      adapters,
      /** Present when at least one port uses a Dapr adapter. */
      dapr: usesDapr ? dapr : undefined,
    };
  });
export type PlatformConfig = z.infer<typeof platformConfigSchema> & {
  /** DATABASE_AUTH=entra: the identity whose tokens log in (AZURE_* variables, DATABASE_AUTH_CLIENT_ID). */
  readonly databaseCredential?: AzureCredentialPlan;
};
export type AdapterChoice = PlatformConfig["adapters"];

const envNames: Record<string, string> = {
  databaseUrl: "DATABASE_URL",
  databaseAuth: "DATABASE_AUTH",
  databaseAuthClientId: "DATABASE_AUTH_CLIENT_ID",
  dataDir: "MATOOLKIT_DATA_DIR",
  embeddedPostgresPort: "MATOOLKIT_EMBEDDED_PG_PORT",
  runtime: "MATOOLKIT_RUNTIME",
  bus: "MATOOLKIT_BUS",
  timers: "MATOOLKIT_TIMERS",
  idempotency: "MATOOLKIT_IDEMPOTENCY",
  workflow: "MATOOLKIT_WORKFLOW",
  logLevel: "LOG_LEVEL",
  dedupeWindowSeconds: "MATOOLKIT_DEDUPE_WINDOW_SECONDS",
  databasePoolSize: "MATOOLKIT_DB_POOL_SIZE",
  databasePrepareStatements: "MATOOLKIT_DB_PREPARE",
  migrateOnStart: "MATOOLKIT_MIGRATE_ON_START",
  daprHttpEndpoint: "DAPR_HTTP_ENDPOINT",
  daprHttpPort: "DAPR_HTTP_PORT",
  daprGrpcPort: "DAPR_GRPC_PORT",
  daprGrpcHost: "MATOOLKIT_DAPR_GRPC_HOST",
  daprApiToken: "DAPR_API_TOKEN",
  appApiToken: "APP_API_TOKEN",
  daprAppPort: "MATOOLKIT_DAPR_APP_PORT",
  daprAppHost: "MATOOLKIT_DAPR_APP_HOST",
  daprPubsub: "MATOOLKIT_DAPR_PUBSUB",
  daprStateStore: "MATOOLKIT_DAPR_STATE_STORE",
  daprJobsApiVersion: "MATOOLKIT_DAPR_JOBS_API_VERSION",
  daprBulkPublish: "MATOOLKIT_DAPR_BULK_PUBLISH",
  otelServiceName: "OTEL_SERVICE_NAME",
  otelSdkDisabled: "OTEL_SDK_DISABLED",
  otlpEndpoint: "OTEL_EXPORTER_OTLP_ENDPOINT",
  otlpTracesEndpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  otlpProtocol: "OTEL_EXPORTER_OTLP_PROTOCOL",
  otlpTracesProtocol: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  metricsPort: "MATOOLKIT_METRICS_PORT",
  metricsHost: "MATOOLKIT_METRICS_HOST",
  "dapr.httpEndpoint": "DAPR_HTTP_ENDPOINT",
  "dapr.appPort": "MATOOLKIT_DAPR_APP_PORT",
};

/** What the entry point knows that the environment does not say. */
export interface PlatformConfigOptions {
  /** MATOOLKIT_MIGRATE_ON_START when unset with DATABASE_URL (all-in-one passes true). */
  readonly migrateOnStartDefault?: boolean;
  /** False for a process that needs no SQL in Dapr mode (the worker): DATABASE_URL not required. */
  readonly usesSql?: boolean;
}

/** Fails fast, naming every bad variable (never its value: a URL may hold a password). */
export function platformConfigFromEnv(
  env: Record<string, string | undefined>,
  options: PlatformConfigOptions = {},
): PlatformConfig {
  const raw = {
    ...Object.fromEntries(
      Object.entries(envNames)
        .filter(([key]) => !key.includes("."))
        .map(([key, name]) => [key, emptyToUndefined(env[name])]),
    ),
    ...(options.migrateOnStartDefault === undefined
      ? {}
      : { migrateOnStartDefault: options.migrateOnStartDefault }),
    ...(options.usesSql === undefined ? {} : { usesSql: options.usesSql }),
  };
  const config: PlatformConfig = parseOrExplain(platformConfigSchema, raw, envNames);
  if (config.databaseAuth !== "entra") return config;
  return {
    ...config,
    databaseCredential: azureCredentialPlanFromEnv(env, {
      ...(config.databaseAuthClientId === undefined
        ? {}
        : { managedIdentityClientId: config.databaseAuthClientId }),
    }),
  };
}

export function parseOrExplain<T extends z.ZodType>(
  schema: T,
  raw: unknown,
  names: Record<string, string>,
): z.infer<T> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "");
    return `${names[key] ?? key}: ${issue.message}`;
  });
  throw new Error(`Invalid configuration: ${problems.join("; ")}`);
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** 127.0.0.0/8, ::1 and localhost: an address only this host can reach. */
function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}
