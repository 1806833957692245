import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_DELIVERY_ATTEMPTS } from "@matoolkit/runtime";
import { checkDaprConventions } from "./check-dapr-conventions.ts";
import { componentSchema, composeSchema, multiAppRunSchema } from "./dapr-config-schemas.ts";
import {
  appDeliveryAttempts,
  componentProfiles,
  daprApps,
  daprComponentNames,
  daprSubscriptions,
} from "./dapr-conventions.ts";
import { commandArguments, flagValue, parseDaprdFlags } from "./daprd-command.ts";
import { loadDaprFiles, parseDaprYaml, type DaprDocument } from "./load-dapr-files.ts";
import { formatProblem, validateDocument, validateDocuments } from "./validate-dapr-files.ts";

const root = resolve(import.meta.dirname, "..", "..");
const context = { pathExists: (path: string) => existsSync(join(root, path)) };

let documents: DaprDocument[];
beforeAll(async () => {
  documents = await loadDaprFiles(root);
});

const documentOf = (file: string): DaprDocument => {
  const found = documents.find((document) => document.file === file);
  if (!found) throw new Error(`${file} was not loaded`);
  return found;
};

/** The repository's documents with one file replaced by an edited copy of its text. */
async function withEditedFile(file: string, edit: (text: string) => string): Promise<DaprDocument[]> {
  const original = await readFile(join(root, file), "utf8");
  const edited = edit(original);
  expect(edited, `the edit of ${file} changed nothing`).not.toBe(original);
  return [...documents.filter((document) => document.file !== file), ...parseDaprYaml(file, edited)];
}

/** Formatted schema problems of YAML text pretending to be `file`. */
function problemsOf(file: string, text: string): string[] {
  return parseDaprYaml(file, text).flatMap((document) =>
    validateDocument(document).problems.map(formatProblem),
  );
}

const validRedisPubsub = `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: matoolkit-pubsub
spec:
  type: pubsub.redis
  version: v1
  metadata:
    - name: redisHost
      value: "localhost:6379"
`;

describe("the repository's Dapr files", () => {
  it("cover the six profiles, the configuration, resiliency, subscriptions, dapr.yaml and Compose", () => {
    const files = new Set(documents.map((document) => document.file));
    const expected = [
      ...componentProfiles.flatMap((profile) => [
        `components/${profile}/pubsub.yaml`,
        `components/${profile}/statestore.yaml`,
      ]),
      "dapr/config.yaml",
      "dapr/resources/resiliency.yaml",
      "dapr/subscriptions/orchestrator-events.yaml",
      "dapr/subscriptions/worker-results.yaml",
      "dapr/subscriptions/worker-jobs.yaml",
      "dapr.yaml",
      "docker-compose.yml",
    ];
    expect([...files]).toEqual(expect.arrayContaining(expected));
  });

  it("are each valid against the schema of their kind", () => {
    const reports = validateDocuments(documents);
    expect(reports.flatMap((report) => report.problems).map(formatProblem)).toEqual([]);
    const kindOf = (file: string) => reports.find((report) => report.document.file === file)?.kind;
    expect(kindOf("components/azure/pubsub.yaml")).toBe("Component");
    expect(kindOf("dapr/subscriptions/worker-jobs.yaml")).toBe("Subscription");
    expect(kindOf("dapr/resources/resiliency.yaml")).toBe("Resiliency");
    expect(kindOf("dapr/config.yaml")).toBe("Configuration");
    expect(kindOf("dapr.yaml")).toBe("MultiAppRun");
    expect(kindOf("docker-compose.yml")).toBe("Compose");
  });

  it("agree with each other and with the conventions table", () => {
    expect(checkDaprConventions(documents, context).map(formatProblem)).toEqual([]);
  });

  it.each(componentProfiles)(
    "profile %s defines matoolkit-pubsub, matoolkit-state and one actor state store",
    (profile) => {
      const components = documents
        .filter((document) => document.file.startsWith(`components/${profile}/`))
        .map((document) => componentSchema.parse(document.value));
      const named = (name: string) => components.filter((component) => component.metadata.name === name);
      expect(named(daprComponentNames.pubsub)).toHaveLength(1);
      expect(named(daprComponentNames.pubsub)[0]?.spec.type).toMatch(/^pubsub\./);
      expect(named(daprComponentNames.stateStore)).toHaveLength(1);
      expect(named(daprComponentNames.stateStore)[0]?.spec.type).toMatch(/^state\./);
      const actorStores = components.filter((component) =>
        component.spec.metadata.some((item) => item.name === "actorStateStore" && item.value === "true"),
      );
      expect(actorStores.map((component) => component.metadata.name)).toEqual([
        daprComponentNames.stateStore,
      ]);
    },
  );

  it("dapr.yaml starts the apps of the conventions table on the local profile", () => {
    const run = multiAppRunSchema.parse(documentOf("dapr.yaml").value);
    expect(
      run.apps.map(({ appID, appPort, daprHTTPPort, daprGRPCPort, command, env }) => ({
        appID,
        appPort,
        daprHTTPPort,
        daprGRPCPort,
        command,
        appPortEnv: env?.MATOOLKIT_DAPR_APP_PORT,
      })),
    ).toEqual(
      daprApps.map((app) => ({
        appID: app.appId,
        appPort: app.appPort,
        daprHTTPPort: app.daprHttpPort,
        daprGRPCPort: app.daprGrpcPort,
        command: app.command,
        appPortEnv: String(app.appPort),
      })),
    );
    expect(run.common?.env).toMatchObject({ MATOOLKIT_RUNTIME: "dapr", DATABASE_URL: expect.any(String) });
    expect(run.common?.resourcesPaths).toEqual(["./components/local", "./dapr/resources"]);
    expect(run.apps.find((app) => app.appID === "matoolkit-worker")?.env?.MATOOLKIT_WORKER_ID).toBe(
      "worker-01",
    );
  });

  it("docker-compose.yml gives every app of the conventions table a daprd sidecar with its ports", () => {
    const compose = composeSchema.parse(documentOf("docker-compose.yml").value);
    for (const app of daprApps) {
      const sidecars = Object.entries(compose.services).filter(([, service]) => {
        const flags = parseDaprdFlags(commandArguments(service.command) ?? []);
        return flagValue(flags, "app-id") === app.appId;
      });
      expect(sidecars, app.appId).toHaveLength(1);
      const [, sidecar] = sidecars[0]!;
      const flags = parseDaprdFlags(commandArguments(sidecar.command) ?? []);
      expect(sidecar.network_mode).toBe(`service:${app.service}`);
      expect({
        appPort: flagValue(flags, "app-port"),
        httpPort: flagValue(flags, "dapr-http-port"),
        grpcPort: flagValue(flags, "dapr-grpc-port"),
      }).toEqual({
        appPort: String(app.appPort),
        httpPort: String(app.daprHttpPort),
        grpcPort: String(app.daprGrpcPort),
      });
      expect(compose.services[app.service]?.command).toEqual(app.imageCommand);
    }
  });

  it("bounds Dapr's inbound retries by the app's own delivery attempts", () => {
    expect(appDeliveryAttempts).toBe(MAX_DELIVERY_ATTEMPTS);
  });
});

describe("the schemas reject broken files, naming the file, line and YAML path", () => {
  it("a component without spec.type", () => {
    const problems = problemsOf(
      "components/broken/pubsub.yaml",
      validRedisPubsub.replace("  type: pubsub.redis\n", ""),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^components\/broken\/pubsub\.yaml:5 spec\.type: /);
  });

  it("a metadata item with both value and secretKeyRef", () => {
    const text = `${validRedisPubsub}    - name: consumerID
      value: "orchestrator"
      secretKeyRef:
        name: consumer
        key: id
`;
    expect(problemsOf("components/broken/pubsub.yaml", text)).toEqual([
      'components/broken/pubsub.yaml:11 spec.metadata[1]: metadata "consumerID" must have exactly one of value or secretKeyRef (it has both)',
    ]);
  });

  it("a Redis pub/sub without redisHost", () => {
    const text = validRedisPubsub.replace(
      '    - name: redisHost\n      value: "localhost:6379"\n',
      "    - name: consumerID\n      value: x\n",
    );
    expect(problemsOf("components/broken/pubsub.yaml", text)).toEqual([
      'components/broken/pubsub.yaml:8 spec.metadata: pubsub.redis needs metadata "redisHost"',
    ]);
  });

  it("a subscription without topic", () => {
    const text = `apiVersion: dapr.io/v2alpha1
kind: Subscription
metadata:
  name: broken
spec:
  pubsubname: matoolkit-pubsub
  routes:
    default: /dapr/topics/x
`;
    const problems = problemsOf("dapr/subscriptions/broken.yaml", text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^dapr\/subscriptions\/broken\.yaml:5 spec\.topic: /);
  });

  it("a credential written into a component instead of a secretKeyRef", () => {
    const text = `${validRedisPubsub}    - name: redisPassword
      value: "hunter2"
`;
    expect(problemsOf("components/broken/pubsub.yaml", text)).toEqual([
      'components/broken/pubsub.yaml:12 spec.metadata[1].value: metadata "redisPassword" is a credential: use secretKeyRef to a secret store, not a value',
    ]);
  });

  it("a misspelt field, a file of unknown kind and invalid YAML", () => {
    expect(
      problemsOf("components/broken/pubsub.yaml", validRedisPubsub.replace("version: v1", "verison: v1")),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^components\/broken\/pubsub\.yaml:7 spec\.verison: Unrecognized key/),
      ]),
    );
    expect(problemsOf("components/broken/thing.yaml", "apiVersion: v1\nkind: ConfigMap\n")).toEqual([
      'components/broken/thing.yaml:2 kind: unknown kind "ConfigMap": expected Component, Subscription, Resiliency or Configuration',
    ]);
    expect(problemsOf("components/broken/bad.yaml", "a: [1, 2\n")[0]).toMatch(
      /^components\/broken\/bad\.yaml:\d+ YAML syntax: /,
    );
  });

  it("a resiliency target naming a policy that does not exist", () => {
    const text = `apiVersion: dapr.io/v1alpha1
kind: Resiliency
metadata:
  name: broken
spec:
  policies:
    retries:
      short: { policy: constant, duration: 1s, maxRetries: 2 }
  targets:
    components:
      matoolkit-pubsub:
        inbound:
          retry: long
`;
    expect(problemsOf("dapr/resources/broken.yaml", text)).toEqual([
      'dapr/resources/broken.yaml:13 spec.targets.components.matoolkit-pubsub.inbound.retry: retry policy "long" is not defined',
    ]);
  });

  it("a multi-app run template with a deprecated field, an unquoted env value and a shared port", () => {
    const text = `version: 1
common:
  resourcesPath: ./components/local
apps:
  - appID: a
    appDirPath: ./
    appPort: 3001
    command: ["node", "a.js"]
    env:
      PORT: 8080
  - appID: b
    appDirPath: ./
    appPort: 3001
    command: ["node", "b.js"]
`;
    expect(problemsOf("dapr.yaml", text)).toEqual([
      "dapr.yaml:3 common.resourcesPath: resourcesPath is deprecated: use resourcesPaths (a list of folders)",
      "dapr.yaml:10 apps[0].env.PORT: environment values must be quoted strings",
    ]);
    expect(
      problemsOf(
        "dapr.yaml",
        text
          .replace("resourcesPath: ./components/local", "resourcesPaths: [./components/local]")
          .replace("PORT: 8080", 'PORT: "8080"'),
      ),
    ).toEqual(["dapr.yaml:13 apps[1].appPort: port 3001 is already taken by a appPort"]);
  });

  it("a Compose sidecar that points at a missing app or unmounted resources", () => {
    const text = `services:
  placement:
    image: daprio/placement
  app-dapr:
    image: daprio/daprd
    network_mode: service:app
    command: ["./daprd", "--app-id", "x", "--app-port", "3001", "--resources-path", "/components", "--placement-host-address", "placement:50005", "--scheduler-host-address", "scheduler:50006"]
`;
    expect(problemsOf("docker-compose.yml", text)).toEqual([
      'docker-compose.yml:6 services.app-dapr.network_mode: sidecar app-dapr points at service "app", which does not exist',
      "docker-compose.yml:7 services.app-dapr.command: sidecar app-dapr: --scheduler-host-address scheduler:50006 names no service of this file",
      "docker-compose.yml:4 services.app-dapr.volumes: sidecar app-dapr reads /components, but no volume is mounted there",
    ]);
  });
});

describe("the cross-file checks reject files that drift from the conventions", () => {
  it("a port in dapr.yaml that differs from the conventions table", async () => {
    const edited = await withEditedFile("dapr.yaml", (text) =>
      text.replace("daprHTTPPort: 3502", "daprHTTPPort: 3599"),
    );
    expect(checkDaprConventions(edited, context).map(formatProblem)).toEqual([
      expect.stringMatching(
        /^dapr\.yaml:\d+ apps\[1\]\.daprHTTPPort: matoolkit-worker daprHTTPPort must be 3502$/,
      ),
    ]);
  });

  it("an extra worker pool in dapr.yaml: accepted with its own WorkerId, refused on another pool's", async () => {
    const pool = (workerId: string, appPort: number) => `  - appID: matoolkit-worker-02
    appDirPath: ./
    appPort: ${appPort}
    daprHTTPPort: 3505
    daprGRPCPort: 50005
    command: ["npx", "tsx", "services/worker/src/main.ts"]
    env:
      MATOOLKIT_DAPR_APP_PORT: "${appPort}"
      MATOOLKIT_WORKER_ID: "${workerId}"
`;
    const withPool = (workerId: string, appPort: number) =>
      withEditedFile("dapr.yaml", (text) => `${text.trimEnd()}\n${pool(workerId, appPort)}`);
    expect(checkDaprConventions(await withPool("worker-02", 3005), context).map(formatProblem)).toEqual([]);
    expect(checkDaprConventions(await withPool("worker-01", 3005), context).map(formatProblem)).toEqual([
      expect.stringMatching(
        /apps\[4\]\.env: matoolkit-worker-02 shares MATOOLKIT_WORKER_ID worker-01 with matoolkit-worker$/,
      ),
    ]);
  });

  it("dapr.yaml loading the declarative subscriptions next to the programmatic ones", async () => {
    const edited = await withEditedFile("dapr.yaml", (text) =>
      text.replace("    - ./dapr/resources\n", "    - ./dapr/resources\n    - ./dapr/subscriptions\n"),
    );
    const problems = checkDaprConventions(edited, context).map(formatProblem);
    expect(problems.length).toBe(daprApps.length);
    expect(problems[0]).toMatch(
      /^dapr\.yaml:\d+ common\.resourcesPaths: dapr\/subscriptions: the apps subscribe programmatically/,
    );
  });

  it("a profile without matoolkit-state", async () => {
    const edited = await withEditedFile("components/kafka/statestore.yaml", (text) =>
      text.replace("name: matoolkit-state", "name: kafka-state"),
    );
    expect(checkDaprConventions(edited, context).map(formatProblem)).toEqual([
      "components/kafka must define the component matoolkit-state exactly once (found 0)",
      "components/kafka the actor state store must be matoolkit-state (workflow state)",
    ]);
  });

  it("dapr.yaml serving the sidecars' API on every interface", async () => {
    const edited = await withEditedFile("dapr.yaml", (text) =>
      text.replace('  apiListenAddresses: "127.0.0.1"\n', ""),
    );
    const problems = checkDaprConventions(edited, context).map(formatProblem);
    expect(problems).toHaveLength(daprApps.length);
    expect(problems[0]).toMatch(
      /^dapr\.yaml:\d+ common: matoolkit-orchestrator must serve the Dapr API on loopback only/,
    );
  });

  it("a Compose sidecar whose API listens on every interface, without the tokens of its app", async () => {
    const edited = await withEditedFile("docker-compose.yml", (text) =>
      text
        .replace("  environment: *dapr-tokens\n", "")
        .replace(
          / {6}# The Dapr API on loopback only[^\n]*\n {6}- --dapr-listen-addresses\n {6}- 127.0.0.1\n/,
          "",
        ),
    );
    const problems = checkDaprConventions(edited, context).map(formatProblem);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^docker-compose\.yml:\d+ services\.orchestrator-dapr\.command: orchestrator-dapr must run --dapr-listen-addresses 127\.0\.0\.1$/,
      ),
    );
    for (const app of daprApps) {
      for (const token of ["DAPR_API_TOKEN", "APP_API_TOKEN"]) {
        expect(problems).toContainEqual(
          expect.stringMatching(new RegExp(`${app.service}-dapr and ${app.service} need the same ${token}$`)),
        );
      }
    }
  });

  it("a Compose sidecar on the wrong app port and an app without its port variable", async () => {
    const edited = await withEditedFile("docker-compose.yml", (text) =>
      text
        .replace('      - --app-port\n      - "3002"', '      - --app-port\n      - "3009"')
        .replace('      MATOOLKIT_DAPR_APP_PORT: "3004"\n', ""),
    );
    expect(checkDaprConventions(edited, context).map(formatProblem)).toEqual([
      expect.stringMatching(
        /^docker-compose\.yml:\d+ services\.worker-dapr\.command: worker-dapr must run --app-port 3002$/,
      ),
      expect.stringMatching(
        /^docker-compose\.yml:\d+ services\.admin-api\.environment: admin-api needs MATOOLKIT_DAPR_APP_PORT=3004$/,
      ),
    ]);
  });

  it("a declarative subscription whose route differs from the programmatic one", async () => {
    const edited = await withEditedFile("dapr/subscriptions/worker-results.yaml", (text) =>
      text.replace(
        "default: /dapr/topics/worker-results/orchestrator",
        "default: /dapr/topics/worker-results",
      ),
    );
    const convention = daprSubscriptions.find((subscription) => subscription.topic === "worker-results");
    expect(checkDaprConventions(edited, context).map(formatProblem)).toEqual([
      `dapr/subscriptions/worker-results.yaml:11 spec.routes: must be ${JSON.stringify(convention?.routes)} (the programmatic routes)`,
    ]);
  });

  it("a JetStream profile with one stream for all topics, a fixed durable name, a max deliver and parallel deliveries", async () => {
    const edited = await withEditedFile("components/nats/pubsub.yaml", (text) =>
      text.replace(
        '    - name: durableName\n      value: "{appID}"\n',
        '    - name: durableName\n      value: "matoolkit"\n    - name: streamName\n      value: "matoolkit"\n    - name: maxDeliver\n      value: "10"\n    - name: concurrency\n      value: "parallel"\n',
      ),
    );
    expect(checkDaprConventions(edited, context).map(formatProblem)).toEqual([
      expect.stringMatching(
        /^components\/nats\/pubsub\.yaml:\d+ spec\.metadata\[2\]: streamName must be unset: /,
      ),
      expect.stringMatching(/spec\.metadata\[1\]: durableName must contain "\{appID\}": /),
      expect.stringMatching(/spec\.metadata\[5\]: queueGroupName must equal durableName: /),
      expect.stringMatching(/spec\.metadata\[4\]: concurrency must be unset or "single": /),
      expect.stringMatching(
        /spec\.metadata\[3\]: maxDeliver must be unset: JetStream skips a message past it/,
      ),
    ]);
  });

  it("a Dapr file in a refused profile's folder, or the folder without its reason", async () => {
    const placed = [...documents, ...parseDaprYaml("components/mqtt/pubsub.yaml", validRedisPubsub)];
    expect(checkDaprConventions(placed, context).map(formatProblem)).toEqual([
      expect.stringMatching(
        /^components\/mqtt\/pubsub\.yaml components\/mqtt is refused, ship no Dapr file there: pubsub\.mqtt3 does not deliver what a persistent session held/,
      ),
    ]);
    const withoutReason = {
      pathExists: (path: string) => path !== "components/mqtt/REFUSED.md" && context.pathExists(path),
    };
    expect(checkDaprConventions(documents, withoutReason).map(formatProblem)).toEqual([
      expect.stringMatching(
        /^components\/mqtt is a refused profile and needs components\/mqtt\/REFUSED\.md saying why/,
      ),
    ]);
  });

  it("inbound retries that would dead-letter before the app's own attempts are used up", async () => {
    const edited = await withEditedFile("dapr/resources/resiliency.yaml", (text) =>
      text.replace("maxRetries: 20", "maxRetries: 2"),
    );
    expect(checkDaprConventions(edited, context).map(formatProblem)).toEqual([
      expect.stringMatching(
        /^dapr\/resources\/resiliency\.yaml:\d+ spec\.targets\.components\.matoolkit-pubsub\.inbound\.retry: deliveryRetry allows 3 attempts, fewer than the app's 10/,
      ),
    ]);
  });
});
