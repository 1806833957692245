/**
 * zod schemas of the Dapr files in this repository, one per kind: Component, Subscription
 * (v2alpha1), Resiliency, Configuration, the Multi-App Run template (dapr.yaml) and the parts of
 * a Docker Compose file the Dapr environment relies on. Field names follow the Dapr sources
 * (pkg/apis/*, dapr/cli pkg/runfileconfig) and the components-contrib metadata; the schemas are
 * strict so that a misspelt field is an error instead of a silently ignored setting.
 */
import { z } from "zod";
import { commandArguments, flagValue, isDaprdCommand, parseDaprdFlags } from "./daprd-command.ts";

const nonEmpty = z.string().min(1);
/** Kubernetes object names (DNS-1123 subdomain), which Dapr uses for every resource. */
const resourceName = z
  .string()
  .regex(
    /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
    "must be lower-case letters, digits, '-' or '.' (a Kubernetes name)",
  );
/** Dapr app ids may not contain dots. */
const appId = z
  .string()
  .regex(/^[A-Za-z0-9]([-_A-Za-z0-9]*[A-Za-z0-9])?$/, "must be a Dapr app id (no dots)");
/** Go duration, as Dapr parses it: 500ms, 10s, 1m30s. */
const goDuration = z
  .string()
  .regex(/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/, "must be a duration like 500ms, 10s or 1m");
const resourceMetadata = z.looseObject({ name: resourceName, namespace: resourceName.optional() });
const scopes = z.array(appId).min(1, "scopes, when present, must list at least one app id").optional();

// ---------------------------------------------------------------------------------------------
// Component

const secretKeyRef = z.strictObject({ name: nonEmpty, key: nonEmpty });

export const componentMetadataItemSchema = z
  .strictObject({
    name: nonEmpty,
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
    secretKeyRef: secretKeyRef.optional(),
  })
  .superRefine((item, ctx) => {
    const given = [item.value !== undefined, item.secretKeyRef !== undefined].filter(Boolean).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `metadata "${item.name}" must have exactly one of value or secretKeyRef (it has ${given === 0 ? "neither" : "both"})`,
      });
    }
  });

/** The building blocks a component type can belong to (the part of `spec.type` before the first dot). */
const componentTypePattern =
  /^(pubsub|state|bindings|secretstores|configuration|lock|workflow|middleware\.http|nameresolution|crypto|conversation)\.[a-z0-9]+([.-][a-z0-9]+)*$/;

/**
 * Metadata each component type cannot work without (components-contrib metadata.yaml and the
 * Dapr component reference). A string is required; a list means "at least one of these".
 */
export const requiredMetadataByComponentType: Readonly<
  Record<string, ReadonlyArray<string | readonly string[]>>
> = {
  "pubsub.redis": ["redisHost"],
  "state.redis": ["redisHost"],
  // Either a connection string or, with Microsoft Entra ID (managed identity), the namespace.
  "pubsub.azure.servicebus.topics": [["namespaceName", "connectionString"]],
  "pubsub.aws.snssqs": ["region"],
  "state.aws.dynamodb": ["table"],
  "pubsub.kafka": ["brokers", "authType"],
  "pubsub.rabbitmq": [["connectionString", "hostname"]],
  "pubsub.jetstream": ["natsURL"],
  "state.postgresql": ["connectionString"],
  "state.azure.cosmosdb": ["url", "database", "collection"],
};

/** Metadata whose value is a credential: it must come from a secret store, not the file. */
const credentialName =
  /(password|secret|secretkey|accesskey|sessiontoken|masterkey|token|clientkey|client_key|seedkey|jwt)$/i;
/** Credentials embedded in a connection string or URI. */
const embeddedCredential = [
  /password=[^\s;]+/i,
  /SharedAccessKey=[^\s;]+/i,
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i,
];
/** `<your-namespace>`-style placeholders are fine: they are not secrets. */
const placeholder = /^<[^<>]+>$/;

function inlineCredentialProblem(name: string, value: unknown): string | undefined {
  if (typeof value !== "string" || value === "" || placeholder.test(value)) return undefined;
  if (credentialName.test(name)) {
    return `metadata "${name}" is a credential: use secretKeyRef to a secret store, not a value`;
  }
  if (embeddedCredential.some((pattern) => pattern.test(value))) {
    return `metadata "${name}" embeds a credential: use secretKeyRef to a secret store, not a value`;
  }
  return undefined;
}

export const componentSchema = z
  .strictObject({
    apiVersion: z.literal("dapr.io/v1alpha1"),
    kind: z.literal("Component"),
    metadata: resourceMetadata,
    spec: z.strictObject({
      type: z.string().regex(componentTypePattern, "must be <building block>.<component>, e.g. pubsub.redis"),
      version: z.enum(["v1", "v2"]),
      metadata: z.array(componentMetadataItemSchema).default([]),
      ignoreErrors: z.boolean().optional(),
      initTimeout: goDuration.optional(),
    }),
    auth: z.strictObject({ secretStore: nonEmpty }).optional(),
    scopes,
  })
  .superRefine((component, ctx) => {
    const items = component.spec.metadata;
    const indexByName = new Map<string, number>();
    items.forEach((item, index) => {
      if (indexByName.has(item.name)) {
        ctx.addIssue({
          code: "custom",
          path: ["spec", "metadata", index, "name"],
          message: `metadata "${item.name}" is given twice`,
        });
      }
      indexByName.set(item.name, index);
      const credential = inlineCredentialProblem(item.name, item.value);
      if (credential)
        ctx.addIssue({ code: "custom", path: ["spec", "metadata", index, "value"], message: credential });
    });

    const type = component.spec.type;
    for (const requirement of requiredMetadataByComponentType[type] ?? []) {
      const names = typeof requirement === "string" ? [requirement] : requirement;
      if (!names.some((name) => indexByName.has(name))) {
        ctx.addIssue({
          code: "custom",
          path: ["spec", "metadata"],
          message:
            names.length === 1
              ? `${type} needs metadata "${names[0]}"`
              : `${type} needs one of metadata ${names.map((name) => `"${name}"`).join(", ")}`,
        });
      }
    }

    const actorIndex = indexByName.get("actorStateStore");
    if (actorIndex !== undefined) {
      const actor = items[actorIndex];
      if (!type.startsWith("state.")) {
        ctx.addIssue({
          code: "custom",
          path: ["spec", "metadata", actorIndex],
          message: `actorStateStore only applies to state stores, not ${type}`,
        });
      } else if (actor?.value !== "true" && actor?.value !== "false") {
        ctx.addIssue({
          code: "custom",
          path: ["spec", "metadata", actorIndex, "value"],
          message: 'actorStateStore must be the string "true" or "false"',
        });
      }
    }
  });
export type DaprComponent = z.infer<typeof componentSchema>;

// ---------------------------------------------------------------------------------------------
// Subscription (declarative, dapr.io/v2alpha1)

const routePath = z.string().regex(/^\/\S*$/, "must be an absolute path such as /dapr/topics/<topic>/<name>");

export const subscriptionSchema = z
  .strictObject({
    apiVersion: z.literal("dapr.io/v2alpha1"),
    kind: z.literal("Subscription"),
    metadata: resourceMetadata,
    spec: z.strictObject({
      pubsubname: nonEmpty,
      topic: nonEmpty,
      routes: z
        .strictObject({
          rules: z.array(z.strictObject({ match: z.string(), path: routePath })).optional(),
          default: routePath.optional(),
        })
        .refine((routes) => (routes.rules?.length ?? 0) > 0 || routes.default !== undefined, {
          message: "routes needs rules or a default route",
        }),
      deadLetterTopic: nonEmpty.optional(),
      metadata: z.record(z.string(), z.string()).optional(),
      // Field names of the bulk settings changed between Dapr releases; only `enabled` is fixed.
      bulkSubscribe: z.looseObject({ enabled: z.union([z.boolean(), z.string()]) }).optional(),
    }),
    scopes,
  })
  .superRefine((subscription, ctx) => {
    if (subscription.spec.deadLetterTopic === subscription.spec.topic) {
      ctx.addIssue({
        code: "custom",
        path: ["spec", "deadLetterTopic"],
        message: "deadLetterTopic must differ from the topic, or failed messages would loop",
      });
    }
  });
export type DaprSubscription = z.infer<typeof subscriptionSchema>;

// ---------------------------------------------------------------------------------------------
// Resiliency

const retryPolicySchema = z.strictObject({
  policy: z.enum(["constant", "exponential"]).optional(),
  duration: goDuration.optional(),
  maxInterval: goDuration.optional(),
  /** -1 (the default when absent) retries forever; 0 never retries. */
  maxRetries: z.number().int().min(-1).optional(),
  matching: z
    .strictObject({ httpStatusCodes: z.string().optional(), gRPCStatusCodes: z.string().optional() })
    .optional(),
});
const circuitBreakerSchema = z.strictObject({
  maxRequests: z.number().int().positive().optional(),
  interval: goDuration.optional(),
  timeout: goDuration.optional(),
  trip: nonEmpty,
});
const policyNames = z.strictObject({
  timeout: nonEmpty.optional(),
  retry: nonEmpty.optional(),
  circuitBreaker: nonEmpty.optional(),
});
const cacheSize = z.number().int().positive().optional();

export const resiliencySchema = z
  .strictObject({
    apiVersion: z.literal("dapr.io/v1alpha1"),
    kind: z.literal("Resiliency"),
    metadata: resourceMetadata,
    scopes,
    spec: z.strictObject({
      policies: z.strictObject({
        timeouts: z.record(z.string(), goDuration).optional(),
        retries: z.record(z.string(), retryPolicySchema).optional(),
        circuitBreakers: z.record(z.string(), circuitBreakerSchema).optional(),
      }),
      targets: z.strictObject({
        apps: z.record(z.string(), policyNames.extend({ circuitBreakerCacheSize: cacheSize })).optional(),
        actors: z
          .record(
            z.string(),
            policyNames.extend({
              circuitBreakerScope: z.enum(["id", "type", "both"]).optional(),
              circuitBreakerCacheSize: cacheSize,
            }),
          )
          .optional(),
        components: z
          .record(
            z.string(),
            z.strictObject({ inbound: policyNames.optional(), outbound: policyNames.optional() }),
          )
          .optional(),
      }),
    }),
  })
  .superRefine((resiliency, ctx) => {
    // A target naming a policy that does not exist is silently ignored by Dapr: reject it here.
    const { policies, targets } = resiliency.spec;
    const known = {
      timeout: new Set(Object.keys(policies.timeouts ?? {})),
      retry: new Set(Object.keys(policies.retries ?? {})),
      circuitBreaker: new Set(Object.keys(policies.circuitBreakers ?? {})),
    };
    const check = (names: z.infer<typeof policyNames> | undefined, path: PropertyKey[]): void => {
      for (const kind of ["timeout", "retry", "circuitBreaker"] as const) {
        const name = names?.[kind];
        if (name !== undefined && !known[kind].has(name)) {
          ctx.addIssue({
            code: "custom",
            path: [...path, kind],
            message: `${kind} policy "${name}" is not defined`,
          });
        }
      }
    };
    for (const [target, names] of Object.entries(targets.apps ?? {}))
      check(names, ["spec", "targets", "apps", target]);
    for (const [target, names] of Object.entries(targets.actors ?? {})) {
      check(names, ["spec", "targets", "actors", target]);
    }
    for (const [target, directions] of Object.entries(targets.components ?? {})) {
      check(directions.inbound, ["spec", "targets", "components", target, "inbound"]);
      check(directions.outbound, ["spec", "targets", "components", target, "outbound"]);
    }
  });
export type DaprResiliency = z.infer<typeof resiliencySchema>;

// ---------------------------------------------------------------------------------------------
// Configuration

const tracingSchema = z
  .strictObject({
    samplingRate: z.string().regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'must be a string between "0" and "1"'),
    stdout: z.boolean().optional(),
    zipkin: z.strictObject({ endpointAddress: z.url() }).optional(),
    otel: z
      .strictObject({
        endpointAddress: nonEmpty,
        isSecure: z.boolean(),
        protocol: z.enum(["grpc", "http"]),
        headers: z.array(z.strictObject({ name: nonEmpty, value: z.string() })).optional(),
      })
      .optional(),
  })
  .refine(
    (tracing) =>
      Number(tracing.samplingRate) === 0 || Boolean(tracing.zipkin ?? tracing.otel ?? tracing.stdout),
    { message: "tracing samples requests but has no exporter (zipkin, otel or stdout)" },
  );
const metricSchema = z.looseObject({ enabled: z.boolean() });

export const configurationSchema = z.strictObject({
  apiVersion: z.literal("dapr.io/v1alpha1"),
  kind: z.literal("Configuration"),
  metadata: resourceMetadata,
  spec: z.strictObject({
    tracing: tracingSchema.optional(),
    metric: metricSchema.optional(),
    metrics: metricSchema.optional(),
    // Sections this repository does not use are accepted as they are, but only by their real names.
    httpPipeline: z.unknown().optional(),
    appHttpPipeline: z.unknown().optional(),
    mtls: z.unknown().optional(),
    secrets: z.unknown().optional(),
    accessControl: z.unknown().optional(),
    api: z.unknown().optional(),
    nameResolution: z.unknown().optional(),
    features: z.array(z.strictObject({ name: nonEmpty, enabled: z.boolean() })).optional(),
    logging: z.unknown().optional(),
    components: z.unknown().optional(),
    wasm: z.unknown().optional(),
    workflow: z.unknown().optional(),
  }),
});
export type DaprConfiguration = z.infer<typeof configurationSchema>;

// ---------------------------------------------------------------------------------------------
// Multi-App Run template (dapr.yaml); field names from dapr/cli pkg/standalone RunConfig.

const port = z.number().int().min(1).max(65535);
const logDestination = z.enum(["console", "file", "fileAndConsole"]);
const runFileShared = {
  configFilePath: nonEmpty.optional(),
  appProtocol: z.enum(["http", "grpc", "https", "grpcs", "h2c", "HTTP", "GRPC"]).optional(),
  apiListenAddresses: z.string().optional(),
  enableProfiling: z.boolean().optional(),
  logLevel: z.enum(["debug", "info", "warn", "error", "fatal", "panic"]).optional(),
  appMaxConcurrency: z.number().int().optional(),
  placementHostAddress: z.string().optional(),
  schedulerHostAddress: z.string().optional(),
  resourcesPaths: z.array(nonEmpty).min(1).optional(),
  appSSL: z.boolean().optional(),
  maxBodySize: z.string().optional(),
  readBufferSize: z.string().optional(),
  enableAppHealthCheck: z.boolean().optional(),
  appHealthCheckPath: routePath.optional(),
  appHealthProbeInterval: z.number().int().positive().optional(),
  appHealthProbeTimeout: z.number().int().positive().optional(),
  appHealthThreshold: z.number().int().positive().optional(),
  enableApiLogging: z.boolean().optional(),
  runtimePath: z.string().optional(),
  // The CLI reads env as map[string]string: quote numbers so they stay strings.
  env: z.record(z.string(), z.string({ error: "environment values must be quoted strings" })).optional(),
  daprdLogDestination: logDestination.optional(),
  appLogDestination: logDestination.optional(),
  resourcesPath: z
    .never({ error: "resourcesPath is deprecated: use resourcesPaths (a list of folders)" })
    .optional(),
};

const runFileAppSchema = z.strictObject({
  ...runFileShared,
  appID: appId,
  appDirPath: nonEmpty,
  appChannelAddress: z.string().optional(),
  appPort: port.optional(),
  daprHTTPPort: port.optional(),
  daprGRPCPort: port.optional(),
  daprInternalGRPCPort: port.optional(),
  metricsPort: port.optional(),
  profilePort: port.optional(),
  unixDomainSocket: z.string().optional(),
  command: z.array(nonEmpty).min(1),
  containerImage: z.string().optional(),
  containerImagePullPolicy: z.enum(["Always", "Never", "IfNotPresent"]).optional(),
  createService: z.boolean().optional(),
});

export const multiAppRunSchema = z
  .strictObject({
    version: z.literal(1),
    name: z.string().optional(),
    common: z.strictObject(runFileShared).optional(),
    apps: z.array(runFileAppSchema).min(1),
  })
  .superRefine((run, ctx) => {
    const appIndexById = new Map<string, number>();
    const ownerOfPort = new Map<number, string>();
    run.apps.forEach((app, index) => {
      if (appIndexById.has(app.appID)) {
        ctx.addIssue({
          code: "custom",
          path: ["apps", index, "appID"],
          message: `app id ${app.appID} is used twice`,
        });
      }
      appIndexById.set(app.appID, index);
      for (const field of [
        "appPort",
        "daprHTTPPort",
        "daprGRPCPort",
        "daprInternalGRPCPort",
        "metricsPort",
      ] as const) {
        const value = app[field];
        if (value === undefined) continue;
        const owner = ownerOfPort.get(value);
        if (owner !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["apps", index, field],
            message: `port ${value} is already taken by ${owner}`,
          });
        }
        ownerOfPort.set(value, `${app.appID} ${field}`);
      }
    });
  });
export type MultiAppRun = z.infer<typeof multiAppRunSchema>;

// ---------------------------------------------------------------------------------------------
// Docker Compose: only what the Dapr environment relies on. Services are loose (Compose has many
// more fields); the sidecars (services running daprd) must point at an existing app.

const composeServiceSchema = z.looseObject({
  image: z.string().optional(),
  build: z.unknown().optional(),
  command: z.union([z.string(), z.array(z.string())]).optional(),
  network_mode: z.string().optional(),
  environment: z
    .union([
      z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
      z.array(z.string()),
    ])
    .optional(),
  volumes: z
    .array(z.union([z.string(), z.looseObject({ source: z.string().optional(), target: z.string() })]))
    .optional(),
  depends_on: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]).optional(),
});

/** Container paths a service mounts (short `src:target[:mode]` or long `{ target }` syntax). */
export function mountTargets(volumes: z.infer<typeof composeServiceSchema>["volumes"]): string[] {
  return (volumes ?? []).map((volume) =>
    typeof volume === "string" ? (volume.split(":")[1] ?? volume) : volume.target,
  );
}

const isInside = (path: string, folder: string): boolean =>
  path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);

export const composeSchema = z
  .looseObject({
    services: z.record(z.string(), composeServiceSchema),
  })
  .superRefine((compose, ctx) => {
    const services = compose.services;
    const sidecarOfApp = new Map<string, string>();
    const sidecarOfAppId = new Map<string, string>();
    const isSidecar = (name: string): boolean => {
      const argv = commandArguments(services[name]?.command);
      return argv !== undefined && isDaprdCommand(argv);
    };

    for (const [name, service] of Object.entries(services)) {
      const argv = commandArguments(service.command);
      if (argv === undefined || !isDaprdCommand(argv)) continue;
      const flags = parseDaprdFlags(argv);
      const at = (...path: PropertyKey[]): PropertyKey[] => ["services", name, ...path];
      const problem = (path: PropertyKey[], message: string): void =>
        ctx.addIssue({ code: "custom", path, message });

      const sidecarAppId = flagValue(flags, "app-id");
      if (!sidecarAppId) {
        problem(at("command"), `sidecar ${name} has no --app-id`);
      } else if (sidecarOfAppId.has(sidecarAppId)) {
        problem(at("command"), `app id ${sidecarAppId} is also used by ${sidecarOfAppId.get(sidecarAppId)}`);
      } else {
        sidecarOfAppId.set(sidecarAppId, name);
      }

      // The sidecar must share its app's network namespace: that is how each reaches the other.
      const app = /^service:(.+)$/.exec(service.network_mode ?? "")?.[1];
      if (app === undefined) {
        problem(
          at("network_mode"),
          `sidecar ${name} needs network_mode "service:<app>" to share its app's network`,
        );
      } else if (services[app] === undefined) {
        problem(at("network_mode"), `sidecar ${name} points at service "${app}", which does not exist`);
      } else if (isSidecar(app)) {
        problem(at("network_mode"), `sidecar ${name} points at "${app}", which is itself a sidecar`);
      } else if (sidecarOfApp.has(app)) {
        problem(at("network_mode"), `app ${app} already has the sidecar ${sidecarOfApp.get(app)}`);
      } else {
        sidecarOfApp.set(app, name);
      }

      for (const portFlag of ["app-port", "dapr-http-port", "dapr-grpc-port", "dapr-internal-grpc-port"]) {
        const value = flagValue(flags, portFlag);
        if (value === undefined) {
          if (portFlag === "app-port") problem(at("command"), `sidecar ${name} has no --app-port`);
        } else if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65535) {
          problem(at("command"), `sidecar ${name}: --${portFlag} ${value} is not a port`);
        }
      }

      // Control-plane addresses must name a service of this file (host:port).
      for (const hostFlag of ["placement-host-address", "scheduler-host-address"]) {
        const address = flagValue(flags, hostFlag);
        if (address === undefined || address === "") continue;
        const host = address.split(",")[0]?.split(":")[0] ?? "";
        if (services[host] === undefined) {
          problem(at("command"), `sidecar ${name}: --${hostFlag} ${address} names no service of this file`);
        }
      }

      // Every path daprd reads must be mounted into the sidecar.
      const targets = mountTargets(service.volumes);
      const paths = [...(flags.get("resources-path") ?? []), ...(flags.get("config") ?? [])];
      for (const path of paths) {
        if (!targets.some((target) => isInside(path, target))) {
          problem(at("volumes"), `sidecar ${name} reads ${path}, but no volume is mounted there`);
        }
      }
    }
  });
export type ComposeFile = z.infer<typeof composeSchema>;
