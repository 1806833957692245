/**
 * The fixed Dapr-mode conventions (app ids, ports, commands, component names, subscriptions) that
 * dapr.yaml, docker-compose.yml, components/ and dapr/subscriptions must agree with. The code
 * (libs/runtime, services) uses the same names; this is the table the config files are checked
 * against.
 */

export interface DaprAppConvention {
  /** Service folder under services/ and the app's service name in docker-compose.yml. */
  readonly service: string;
  readonly appId: string;
  /** Where the app serves Dapr's callbacks (MATOOLKIT_DAPR_APP_PORT). */
  readonly appPort: number;
  readonly daprHttpPort: number;
  readonly daprGrpcPort: number;
  /** How dapr.yaml starts the app from the sources. */
  readonly command: readonly string[];
  /** How docker-compose.yml starts it: the image's entry command (scripts/build/commands.ts). */
  readonly imageCommand: readonly string[];
  /** Whether the app opens SQL in Dapr mode (needs DATABASE_URL); the worker does not. */
  readonly usesSql: boolean;
  /** Environment the app needs beyond the common Dapr-mode variables. */
  readonly env: Readonly<Record<string, string>>;
}

export const daprApps: readonly DaprAppConvention[] = [
  {
    service: "orchestrator",
    appId: "matoolkit-orchestrator",
    appPort: 3001,
    daprHttpPort: 3501,
    daprGrpcPort: 50001,
    command: ["npx", "tsx", "services/orchestrator/src/main.ts"],
    imageCommand: ["orchestrator"],
    usesSql: true,
    env: {},
  },
  {
    service: "worker",
    appId: "matoolkit-worker",
    appPort: 3002,
    daprHttpPort: 3502,
    daprGrpcPort: 50002,
    command: ["npx", "tsx", "services/worker/src/main.ts"],
    imageCommand: ["worker"],
    usesSql: false,
    env: { MATOOLKIT_WORKER_ID: "worker-01" },
  },
  {
    service: "scheduler",
    appId: "matoolkit-scheduler",
    appPort: 3003,
    daprHttpPort: 3503,
    daprGrpcPort: 50003,
    command: ["npx", "tsx", "services/scheduler/src/main.ts"],
    imageCommand: ["scheduler"],
    usesSql: true,
    env: {},
  },
  {
    service: "admin-api",
    appId: "matoolkit-admin-api",
    appPort: 3004,
    daprHttpPort: 3504,
    daprGrpcPort: 50004,
    command: ["npx", "tsx", "services/admin-api/src/main.ts"],
    imageCommand: ["admin-api"],
    usesSql: true,
    env: { PORT: "8080" },
  },
];

export const daprComponentNames = { pubsub: "matoolkit-pubsub", stateStore: "matoolkit-state" } as const;

/** The deployment profiles: each folder under components/ is a drop-in `--resources-path`. */
export const componentProfiles = ["local", "azure", "aws", "rabbitmq", "kafka", "nats"] as const;
export type ComponentProfile = (typeof componentProfiles)[number];

/**
 * Profiles that were tried against the real broker on real daprd and refused: their folder holds
 * only REFUSED.md (the reason and the evidence), and any Dapr file placed there is an error.
 */
export const refusedProfiles: Readonly<Record<string, string>> = {
  mqtt:
    "pubsub.mqtt3 does not deliver what a persistent session held across a sidecar restart " +
    "(the broker sends it right after CONNACK, before daprd subscribes, and paho neither delivers nor " +
    "acknowledges it), so messages published while a sidecar is away, or held by a sidecar that " +
    "stopped, never reach the app: no at-least-once delivery",
};

/** components/local with container host names, loaded only by docker-compose.yml. */
export const composeComponentsFolder = "components/compose";

/** Resources every sidecar loads besides its profile (the resiliency policies). */
export const sharedResourcesFolder = "dapr/resources";

/** Declarative subscriptions: an alternative to the apps' programmatic ones, never loaded with them. */
export const declarativeSubscriptionsFolder = "dapr/subscriptions";

export const daprConfigFile = "dapr/config.yaml";
export const composeDaprConfigFile = "dapr/config.compose.yaml";

export interface SubscriptionConvention {
  readonly appId: string;
  readonly topic: string;
  readonly routes: {
    readonly default?: string;
    readonly rules?: readonly { readonly match: string; readonly path: string }[];
  };
  readonly deadLetterTopic: string;
}

/** What the apps return from GET /dapr/subscribe (dapr/subscriptions is the declarative twin). */
export const daprSubscriptions: readonly SubscriptionConvention[] = [
  {
    appId: "matoolkit-orchestrator",
    topic: "orchestrator-events",
    routes: { default: "/dapr/topics/orchestrator-events/orchestrator" },
    deadLetterTopic: "orchestrator-events-deadletter",
  },
  {
    appId: "matoolkit-orchestrator",
    topic: "worker-results",
    routes: { default: "/dapr/topics/worker-results/orchestrator" },
    deadLetterTopic: "worker-results-deadletter",
  },
  {
    // Issue 12: webhook notifications, the orchestrator's notifier.
    appId: "matoolkit-orchestrator",
    topic: "notifications",
    routes: { default: "/dapr/topics/notifications/notifier" },
    deadLetterTopic: "notifications-deadletter",
  },
  {
    appId: "matoolkit-worker",
    topic: "worker-jobs",
    routes: {
      rules: [
        { match: 'event.data.WorkerId == "worker-01"', path: "/dapr/topics/worker-jobs/worker-worker-01" },
      ],
      default: "/dapr/unmatched/worker-jobs",
    },
    deadLetterTopic: "worker-jobs-deadletter",
  },
];

/**
 * How many times the app's delivery ledger lets a message fail before answering DROP
 * (MAX_DELIVERY_ATTEMPTS in libs/runtime, spec 000's max delivery count). Dapr's inbound retry
 * policy must allow at least this many attempts, or Dapr dead-letters a message first.
 */
export const appDeliveryAttempts = 10;
