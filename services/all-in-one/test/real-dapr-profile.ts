import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  createRabbitMqVhost,
  freePort,
  rabbitMqView,
  redisStreamsView,
  renderDaprConfiguration,
  renderDaprResources,
  requireRuntimeBinaries,
  startDaprControlPlane,
  startDaprd,
  startRedisServer,
  type BrokerView,
  type DaprControlPlane,
  type Daprd,
  type HarnessRedis,
  type MetadataOverrides,
} from "@matoolkit/dapr-harness";
import { topics } from "@matoolkit/domain";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { openNatsBroker } from "./real-broker-setup.ts";
import type { OpenedRuntime, RuntimeProfile } from "./runtime-profiles.ts";

const repoRoot = resolve(import.meta.dirname, "../../..");

/** The component profiles of components/ that run on this machine's real brokers. */
export type RealComponentProfile = "local" | "rabbitmq" | "nats";

/** What a drill may do to the real infrastructure of an opened profile. */
export interface RealDaprRuntime extends OpenedRuntime {
  readonly version: string;
  readonly controlPlane: DaprControlPlane;
  /** The sidecar of the current start, if any. */
  sidecar(): Daprd | undefined;
  /** Stops the broker and starts it again on the same port and data (Redis of the profile's own only). */
  restartBroker(): Promise<void>;
}

export interface RealDaprProfile extends RuntimeProfile {
  open(): Promise<RealDaprRuntime>;
}

/**
 * Every port on Dapr through REAL daprd, placement and scheduler (built by `npm run dapr:install`)
 * and a real broker and state store: the shipped component files of `components/<profile>` and
 * `dapr/resources`, changed only to point at this profile's own Redis (a redis-server it starts),
 * RabbitMQ vhost or PostgreSQL database, so test files never share a topic.
 *
 * `local`: Redis Streams pub/sub + Redis state (the actor state store of Dapr Workflow).
 * `rabbitmq`: the machine's RabbitMQ (a vhost of its own) + PostgreSQL v2 state.
 * `nats`: the machine's NATS JetStream (streams of its own) + PostgreSQL v2 state (real-broker-setup.ts).
 */
export function realDaprProfile(options: {
  readonly version: string;
  /** The test process's environment: where the built binaries are (MATOOLKIT_DAPR_CACHE, HOME). */
  readonly processEnv: Readonly<Record<string, string | undefined>>;
  readonly components: RealComponentProfile;
  readonly env: Record<string, string>;
  /** Redis with appendonly (a drill restarts it and expects what was acknowledged back). */
  readonly durableBroker?: boolean;
  /** Keep components/local's Redis redelivery timing (300 s) instead of the suite's 15 s. */
  readonly shippedRedisTimings?: boolean;
}): RealDaprProfile {
  const binaries = () => requireRuntimeBinaries(options.version, options.processEnv);
  // MATOOLKIT_DAPR_LOG_LEVEL=debug for a post-mortem (with MATOOLKIT_DAPR_KEEP_DIRS=1).
  const debugLogs = options.processEnv.MATOOLKIT_DAPR_LOG_LEVEL === "debug";
  return {
    name: `${options.env.MATOOLKIT_RUNTIME ?? "dapr"} on real daprd ${binaries().version}, components/${options.components}`,
    async open(): Promise<RealDaprRuntime> {
      const bins = binaries();
      // Token authentication both ways, as compose and Helm deploy it: every call the system makes
      // to daprd carries DAPR_API_TOKEN, and every callback daprd makes carries APP_API_TOKEN.
      const apiToken = randomBytes(24).toString("base64url");
      const appApiToken = randomBytes(24).toString("base64url");
      const dir = mkdtempSync(join(tmpdir(), `matoolkit-dapr-${bins.version}-`));
      const closers: Array<() => Promise<void>> = [];
      const close = async () => {
        for (const closer of closers.reverse()) await closer().catch(() => undefined);
        // MATOOLKIT_DAPR_KEEP_DIRS=1 keeps daprd's, placement's and scheduler's logs for a post-mortem.
        if (options.processEnv.MATOOLKIT_DAPR_KEEP_DIRS === "1")
          console.warn(`real Dapr files kept in ${dir}`);
        else rmSync(dir, { recursive: true, force: true });
      };
      try {
        const controlPlane = await startDaprControlPlane({
          binaries: bins,
          dataDir: join(dir, "control-plane"),
        });
        closers.push(() => controlPlane.stop());
        let redis: HarnessRedis | undefined;
        let view: BrokerView;
        let overrides: MetadataOverrides;
        if (options.components === "local") {
          redis = await startRedisServer({
            dataDir: join(dir, "redis"),
            durable: options.durableBroker ?? false,
          });
          closers.push(() => redis!.stop());
          const address = `${redis.host}:${redis.port}`;
          overrides = {
            "matoolkit-pubsub": {
              redisHost: address,
              // The one timing changed from components/local: Redis Streams hands a message that a
              // stopped sidecar left unacknowledged to the next one only once it has been pending
              // for processingTimeout (components-contrib pubsub/redis reclaimPendingMessages),
              // 300 s as shipped, so a restart scenario would wait 5 minutes. The drills keep the
              // shipped value (and print the time it costs).
              ...(options.shippedRedisTimings === true
                ? {}
                : { processingTimeout: "15s", redeliverInterval: "1s" }),
            },
            "matoolkit-state": { redisHost: address },
          };
          view = redisStreamsView(redis);
        } else if (options.components === "nats") {
          const setup = await openNatsBroker();
          closers.push(...setup.closers);
          overrides = setup.overrides;
          view = setup.view;
        } else {
          const vhost = await createRabbitMqVhost({});
          closers.push(() => vhost.delete());
          const stateDatabase: TestDatabase = await createTestDatabase();
          closers.push(() => stateDatabase.drop());
          const pgUrl = new URL(stateDatabase.url);
          overrides = {
            "matoolkit-pubsub": { connectionString: vhost.url },
            "matoolkit-state": {
              connectionString: `host=${pgUrl.hostname} port=${pgUrl.port || "5432"} user=${decodeURIComponent(pgUrl.username || "postgres")}${pgUrl.password === "" ? "" : ` password=${decodeURIComponent(pgUrl.password)}`} database=${pgUrl.pathname.slice(1)} connect_timeout=10`,
            },
          };
          const watched = Object.values(topics).flatMap((topic) => [topic, `${topic}-deadletter`]);
          view = await rabbitMqView({ url: vhost.url, topics: watched });
        }
        closers.push(() => view.close());
        const resources = join(dir, "resources");
        renderDaprResources({
          sourceDirs: [join(repoRoot, "components", options.components), join(repoRoot, "dapr", "resources")],
          targetDir: resources,
          overrides,
        });

        const configFile = renderDaprConfiguration({
          source: join(repoRoot, "dapr", "config.yaml"),
          targetDir: join(dir, "config"),
        });
        let sidecar: Daprd | undefined;
        closers.push(async () => {
          await sidecar?.stop();
        });
        return {
          version: bins.version,
          controlPlane,
          sidecar: () => sidecar,
          async nextStart() {
            await sidecar?.stop();
            const appPort = await freePort();
            sidecar = await startDaprd({
              binaries: bins,
              appId: "matoolkit",
              appPort,
              resourcesPaths: [resources],
              configFile,
              placementAddress: controlPlane.placementAddress,
              schedulerAddress: controlPlane.schedulerAddress,
              logDir: dir,
              apiToken,
              appApiToken,
              ...(debugLogs ? { logLevel: "debug" as const } : {}),
            });
            return {
              ...options.env,
              DAPR_API_TOKEN: apiToken,
              APP_API_TOKEN: appApiToken,
              DAPR_HTTP_ENDPOINT: sidecar.httpEndpoint,
              DAPR_GRPC_PORT: String(sidecar.grpcPort),
              MATOOLKIT_DAPR_APP_PORT: String(appPort),
            };
          },
          async systemStopped() {
            await sidecar?.stop();
            sidecar = undefined;
          },
          brokerMessages: (topic) => view.messages(topic),
          async restartBroker() {
            if (redis === undefined)
              throw new Error("restartBroker: only the local profile's own Redis can be restarted here");
            await redis.restart();
          },
          close,
        };
      } catch (error) {
        await close();
        throw error;
      }
    },
  };
}
