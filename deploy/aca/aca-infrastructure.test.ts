/**
 * deploy/aca (Bicep for Azure Container Apps) and azure.yaml, checked without Azure: no Bicep
 * compiler, azd or Azure subscription is reachable from the test machines. What is checked:
 * - the Bicep structurally (testing/bicep-reader.ts): module files exist and receive exactly the
 *   parameters they declare (all required ones), loaded files exist, no parameter or variable is
 *   unused, API versions are well formed, the parameter files set only declared parameters with
 *   allowed values, no module's whole `outputs` is used as a value; no secret is written anywhere;
 * - what a first `azd up` needs: Key Vault names new with each environment, a revision's shape
 *   with the placeholder image (no Dapr, probes, command) and with a release (all of them), the
 *   hooks azure.yaml runs (their behaviour: hooks.test.ts; db-roles.sh: db-roles.test.ts);
 * - against the code: the Service Bus topics and subscriptions equal the code's topology (and the
 *   reverse), the Dapr components (Bicep and components/*.yaml, the latter against a zod schema
 *   of Container Apps' component) match components/azure, the app ids and ports equal
 *   dapr/README.md and the platform configuration, every variable set is read by the code and the
 *   code's own parsers accept each service's environment (publishing without Dapr's alpha bulk API,
 *   exporting traces over gRPC to Container Apps' agent), each identity holds exactly the roles its
 *   service uses, azure.yaml's services are the image's commands;
 * - that each check can fail: every group runs once more on a copy with one defect.
 * Property names, types and API versions against the resource schemas are bicep-schema.test.ts's
 * job. What neither can tell: whether the compiler and Azure accept the templates beyond that, or
 * whether the deployed system runs; see deploy/README.md.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { topics } from "@matoolkit/domain";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { platformConfigFromEnv } from "../../libs/platform/src/platform-config.ts";
import { secretKeySourceFromEnv } from "../../libs/platform/src/secrets/secrets-config.ts";
import { deadLetterTopicOf } from "../../libs/runtime/src/dapr/subscription-announcement.ts";
import { otlpTracesProtocol, otlpTracesUrl } from "../../libs/runtime/src/telemetry/tracing.ts";
import {
  notificationsSubscription,
  orchestratorEventsSubscription,
  workerJobsSubscription,
  workerResultsSubscription,
} from "../../libs/runtime/src/topology.ts";
import { daprApps } from "../../scripts/dapr-config/dapr-conventions.ts";
import { adminApiConfigFromEnv } from "../../services/admin-api/src/admin-api-config.ts";
import { authConfigFromEnv } from "../../libs/auth/src/auth-config.ts";
import { adminApiPart } from "../../services/admin-api/src/compose.ts";
import { orchestratorPart } from "../../services/orchestrator/src/compose.ts";
import { orchestratorConfigFromEnv } from "../../services/orchestrator/src/orchestrator-config.ts";
import { schedulerPart } from "../../services/scheduler/src/compose.ts";
import { schedulerConfigFromEnv } from "../../services/scheduler/src/scheduler-config.ts";
import { workerPart } from "../../services/worker/src/compose.ts";
import { tenantConfigFromEnv } from "../../services/worker/src/tenant/tenant-config.ts";
import { workerConfigFromEnv } from "../../services/worker/src/worker-config.ts";
import {
  azureYamlProblems,
  bicep,
  bicepComponents,
  componentFiles,
  componentProblems,
  containerAppShape,
  containerApps,
  identityAccess,
  keyVaultNameProblems,
  migrateJobEnv,
  passedParams,
  roleDefinitionProblems,
  secretProblems,
  structureProblems,
  topologyProblems,
  type ContainerAppModel,
  type ReferenceComponent,
  type Sources,
} from "./testing/aca-checks.ts";
import type { EnvEntry } from "./testing/bicep-eval.ts";
import { literalOf } from "./testing/bicep-reader.ts";

const root = join(import.meta.dirname, "..", "..");

function filesUnder(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, encoding: "utf8" })
    .map((entry) => join(directory, entry).split(sep).join("/"))
    .filter((path) => statSync(join(root, path)).isFile());
}

const disk: Sources = {
  read: (path) => readFileSync(join(root, path), "utf8"),
  exists: (path) => {
    try {
      return statSync(join(root, path)).isFile();
    } catch {
      return false;
    }
  },
  list: filesUnder,
};

/** The repository with one file's text replaced (or removed when `edit` returns undefined). */
function withEdit(path: string, edit: (text: string) => string | undefined): Sources {
  const original = disk.read(path);
  const changed = edit(original);
  if (changed === original) throw new Error(`the edit of ${path} changed nothing`);
  return {
    read: (p) => {
      if (p !== path) return disk.read(p);
      if (changed === undefined) throw new Error(`${p} was removed`);
      return changed;
    },
    exists: (p) => (p === path ? changed !== undefined : disk.exists(p)),
    list: (d) => disk.list(d).filter((p) => p !== path || changed !== undefined),
  };
}

// ---------------------------------------------------------------------------------------------
// What the code says

const workerId = "worker-01";
const appOf = (service: string) => {
  const app = daprApps.find((candidate) => candidate.service === service);
  if (app === undefined) throw new Error(`no Dapr app convention for ${service}`);
  return app;
};
const orchestratorAppId = appOf("orchestrator").appId;
const workerAppId = appOf("worker").appId;

/** The image's commands (deployment contract). */
const imageCommands = ["all-in-one", "admin-api", "orchestrator", "scheduler", "worker", "migrate"];

/** Each service's needs, from its own composition part (compose.ts). */
const needs = {
  "admin-api": adminApiPart({}, { dataSources: { query: async () => [] } as never }).needs,
  orchestrator: orchestratorPart({}).needs,
  scheduler: schedulerPart({}, { dataSources: { query: async () => [] } as never }).needs,
  worker: workerPart({}).needs,
} as const;

/**
 * The Service Bus entities Dapr uses: subscription names are the consumer ids (the app ids); the
 * orchestrator reads back the dead letters of every topic it consumes, and of the worker's when
 * it adopts them; the worker pool's subscription carries 000's SQL filter on WorkerId.
 */
function expectedTopology() {
  const consumed = [orchestratorEventsSubscription, workerResultsSubscription, notificationsSubscription].map(
    (subscription) => subscription.topic,
  );
  const worker = workerJobsSubscription(workerId);
  const deadLettered = needs.orchestrator.workerJobDeadLetters ? [...consumed, worker.topic] : consumed;
  return {
    topics: [...Object.values(topics), ...Object.values(topics).map(deadLetterTopicOf)],
    subscriptions: [
      ...consumed.map((topic) => ({ topic, name: orchestratorAppId, consumer: "orchestrator", filter: "" })),
      ...deadLettered.map((topic) => ({
        topic: deadLetterTopicOf(topic),
        name: orchestratorAppId,
        consumer: "orchestrator",
        filter: "",
      })),
      {
        topic: worker.topic,
        name: workerAppId,
        consumer: "worker",
        filter: Object.entries(worker.filter ?? {})
          .map(([property, value]) => `${property} = '${value}'`)
          .join(" AND "),
      },
    ],
  };
}

/** Text of the code that runs (tests excluded): a variable must be named here to be read. */
const codeText = ["libs", "services"]
  .flatMap((top) => readdirSync(join(root, top)).map((name) => `${top}/${name}/src`))
  .filter((dir) => disk.list(dir).length > 0 && !dir.startsWith("services/dashboard"))
  .flatMap((dir) => disk.list(dir))
  .filter(
    (path) =>
      path.endsWith(".ts") && !/\.(test|e2e\.test|contract)\.ts$/.test(path) && !path.includes("/testing/"),
  )
  .map((path) => disk.read(path))
  .join("\n");
const isRead = (name: string) => new RegExp(`["'.\`]${name}\\b`).test(codeText);

const bicepParams = new Map([
  ["tenantMode", "entra"],
  ["logLevel", "info"],
  ["workerConcurrency", "4"],
]);

/** Values Azure provides at deploy or run time, by variable, for the code's parsers. */
const samples: Record<string, string> = {
  DATABASE_URL:
    "postgres://id-dev-orchestrator@psql-dev.postgres.database.azure.com:5432/matoolkit?sslmode=require",
  DATABASE_AUTH_CLIENT_ID: "11111111-1111-4111-8111-111111111111",
  AZURE_CLIENT_ID: "11111111-1111-4111-8111-111111111111",
  AZURE_AD_TENANT_ID: "22222222-2222-4222-8222-222222222222",
  AZURE_AD_CLIENT_ID: "33333333-3333-4333-8333-333333333333",
  MATOOLKIT_TENANT_ID: "44444444-4444-4444-8444-444444444444",
  MATOOLKIT_CLIENT_ID: "55555555-5555-4555-8555-555555555555",
  MATOOLKIT_KEY_VAULT_URL: "https://kv-dev-abc.vault.azure.net/",
  MATOOLKIT_SECRETS_KEYVAULT_URL: "https://kvs-dev-abcde.vault.azure.net/",
  MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME: "matoolkit-worker",
  MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID: "66666666-6666-4666-8666-666666666666",
  MATOOLKIT_WORKER_ID: workerId,
};
/** What Container Apps sets in every container with a managed identity and Dapr. */
const platformEnv = {
  IDENTITY_ENDPOINT: "http://localhost:42356/msi/token",
  IDENTITY_HEADER: "sample",
  DAPR_HTTP_PORT: "3500",
  DAPR_GRPC_PORT: "50001",
  // Random per app and revision, injected into the app's container when Dapr is enabled
  // (learn.microsoft.com/azure/container-apps/dapr-authentication-token).
  APP_API_TOKEN: "sample-app-token",
};

function runtimeEnv(entries: readonly EnvEntry[]): Record<string, string> {
  const env: Record<string, string> = { ...platformEnv };
  for (const { name, value } of entries) {
    const resolved = value ?? samples[name];
    if (resolved === undefined) throw new Error(`no sample for ${name}, whose value the test cannot compute`);
    env[name] = resolved;
  }
  return env;
}

/** Runs the service's own configuration parsers, as its main.ts does. */
function parseServiceConfig(service: string, env: Record<string, string>): void {
  switch (service) {
    case "admin-api":
      platformConfigFromEnv(env, { usesSql: needs["admin-api"].sql });
      adminApiConfigFromEnv(env);
      authConfigFromEnv(env);
      secretKeySourceFromEnv(env, "/data");
      return;
    case "orchestrator":
      platformConfigFromEnv(env, { usesSql: needs.orchestrator.sql });
      orchestratorConfigFromEnv(env);
      secretKeySourceFromEnv(env, "/data");
      return;
    case "scheduler":
      platformConfigFromEnv(env, { usesSql: needs.scheduler.sql });
      schedulerConfigFromEnv(env);
      return;
    case "worker":
      platformConfigFromEnv(env, { usesSql: needs.worker.sql });
      workerConfigFromEnv(env);
      tenantConfigFromEnv(env);
      return;
    default:
      throw new Error(`unknown service ${service}`);
  }
}

/** App ports listed in dapr/README.md ("`matoolkit-orchestrator` 3001/3501/50001"). */
const readmePorts = new Map(
  [...disk.read("dapr/README.md").matchAll(/`(matoolkit-[a-z-]+)` (\d+)\/\d+\/\d+/g)].map((m) => [
    m[1]!,
    Number(m[2]),
  ]),
);

const azureComponentSchema = z.object({
  metadata: z.object({ name: z.string() }),
  spec: z.object({
    type: z.string(),
    version: z.string(),
    metadata: z.array(z.object({ name: z.string() })),
  }),
});
const referenceComponents: ReferenceComponent[] = disk
  .list("components/azure")
  .filter((path) => path.endsWith(".yaml"))
  .map((path) => {
    const component = azureComponentSchema.parse(parse(disk.read(path)));
    return {
      name: component.metadata.name,
      type: component.spec.type,
      version: component.spec.version,
      metadataNames: component.spec.metadata.map((item) => item.name),
    };
  });

/** Component name → app ids that use it: each app's pub/sub (MATOOLKIT_DAPR_PUBSUB) and the state store. */
function componentUsers(apps: readonly ContainerAppModel[]): Map<string, string[]> {
  const users = new Map<string, string[]>();
  const use = (name: string, appId: string) => users.set(name, [...(users.get(name) ?? []), appId]);
  for (const app of apps) {
    const env = Object.fromEntries(app.env.map((entry) => [entry.name, entry.value]));
    use(env.MATOOLKIT_DAPR_PUBSUB ?? "matoolkit-pubsub", app.appId);
    use(env.MATOOLKIT_DAPR_STATE_STORE ?? "matoolkit-state", app.appId);
  }
  return users;
}

// ---------------------------------------------------------------------------------------------

describe("deploy/aca Bicep structure", () => {
  it("has modules that exist and receive the parameters they declare, no unused parameter or variable", () => {
    expect(structureProblems(disk)).toEqual([]);
  });

  it("is two-stage at subscription scope: a foundation module, then the apps", () => {
    const main = readFileSync(join(root, "deploy/aca/main.bicep"), "utf8");
    expect(main).toMatch(/^targetScope = 'subscription'$/m);
    expect(main).toMatch(/module foundation 'modules\/foundation\.bicep'/);
    expect(main).toMatch(/^ {4}postgresFqdn: foundation\.outputs\.postgresFqdn$/m);
    expect(main).toMatch(
      /^output MATOOLKIT_API_URL string = 'https:\/\/\$\{apps\.outputs\.adminApiFqdn\}'$/m,
    );
    expect(main).toMatch(/^output AZURE_CONTAINER_REGISTRY_ENDPOINT string/m);
  });

  it("fails when a module is given another module's whole outputs object (Azure/bicep#16792)", () => {
    // Stage 2 passed as one object: apps.bicep would read {type, value} wrappers at deploy time.
    const whole = withEdit("deploy/aca/main.bicep", (t) =>
      t.replace(
        "    identityIds: foundation.outputs.identityIds\n",
        "    identityIds: foundation.outputs.identityIds\n    foundation: foundation.outputs\n",
      ),
    );
    expect(structureProblems(whole)).toContain(
      "deploy/aca/main.bicep: `foundation: foundation.outputs` uses foundation.outputs whole; pass each output on its own (Azure/bicep#16792)",
    );
    const viaVariable = withEdit(
      "deploy/aca/main.bicep",
      (t) => `${t}\nvar stageOne = foundation.outputs\noutput X object = stageOne\n`,
    );
    expect(structureProblems(viaVariable)).toContain(
      "deploy/aca/main.bicep: `var stageOne = foundation.outputs` uses foundation.outputs whole; pass each output on its own (Azure/bicep#16792)",
    );
  });

  it("fails on a module file that does not exist, a missing or unknown module parameter, an unused one", () => {
    const missingFile = withEdit("deploy/aca/modules/foundation.bicep", (t) =>
      t.replace("module network 'network.bicep'", "module network 'networks.bicep'"),
    );
    expect(structureProblems(missingFile)).toContain(
      "deploy/aca/modules/foundation.bicep: module network refers to networks.bicep, which does not exist",
    );
    const missingParam = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace("    daprAppPort: 3001\n", ""),
    );
    expect(structureProblems(missingParam)).toContain(
      "deploy/aca/modules/apps.bicep: module orchestrator does not pass the required param daprAppPort",
    );
    const unknownParam = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace("    daprAppPort: 3001\n", "    daprAppPort: 3001\n    appPortt: 3001\n"),
    );
    expect(structureProblems(unknownParam)).toContain(
      "deploy/aca/modules/apps.bicep: module orchestrator passes appPortt, which the module does not declare",
    );
    const unused = withEdit("deploy/aca/modules/monitoring.bicep", (t) => `${t}\nparam forgotten string\n`);
    expect(structureProblems(unused)).toContain(
      "deploy/aca/modules/monitoring.bicep: param forgotten is declared but never used",
    );
    const badFile = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace("../hooks/db-roles.sh", "../hooks/roles.sh"),
    );
    expect(structureProblems(badFile)).toContain(
      "deploy/aca/modules/apps.bicep: loads ../hooks/roles.sh, which does not exist",
    );
  });

  it("fails on a parameter file that sets an undeclared parameter or a value outside @allowed", () => {
    const undeclared = withEdit("deploy/aca/main.dev.bicepparam", (t) => `${t}param workerCount = 3\n`);
    expect(structureProblems(undeclared)).toContain(
      "deploy/aca/main.dev.bicepparam: sets workerCount, which main.bicep does not declare",
    );
    const notAllowed = withEdit("deploy/aca/main.dev.bicepparam", (t) =>
      t.replace("param serviceBusSku = 'Standard'", "param serviceBusSku = 'Basic'"),
    );
    expect(structureProblems(notAllowed)).toContain(
      "deploy/aca/main.dev.bicepparam: serviceBusSku 'Basic' is not one of Standard, Premium",
    );
    const missing = withEdit("deploy/aca/main.parameters.json", (t) =>
      t.replace(/\s*"adminApiClientId": \{\s*"value": "[^"]*"\s*\},/, ""),
    );
    expect(structureProblems(missing)).toContain(
      "deploy/aca/main.parameters.json: does not set the required param adminApiClientId",
    );
  });

  it("holds no secret, and PostgreSQL and Service Bus are passwordless", () => {
    expect(secretProblems(disk)).toEqual([]);
    const password = withEdit("deploy/aca/modules/postgres.bicep", (t) =>
      t.replace("passwordAuth: 'Disabled'", "passwordAuth: 'Enabled'\n    administratorLoginPassword: 'x'"),
    );
    expect(secretProblems(password)).toEqual([
      "deploy/aca/modules/postgres.bicep: holds a PostgreSQL administrator password",
      "deploy/aca/modules/postgres.bicep: holds a password literal",
      "postgres.bicep: password authentication is not disabled",
    ]);
    const urlPassword = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace("'postgres://${postgresFqdn}", "'postgres://app:hunter2@${postgresFqdn}"),
    );
    expect(secretProblems(urlPassword)).toEqual([
      "deploy/aca/modules/apps.bicep: holds a password in a connection URL",
    ]);
  });
});

describe("Service Bus against the code's topology", () => {
  it("declares exactly the code's topics and subscriptions, with 000's settings", () => {
    expect(topologyProblems(disk, workerId, expectedTopology())).toEqual([]);
  });

  it("fails on a topic or subscription the code does not use, or one it uses that is missing", () => {
    const extraTopic = withEdit("deploy/aca/modules/service-bus.bicep", (t) =>
      t.replace("'worker-results', 'notifications']", "'worker-results', 'notifications', 'audit']"),
    );
    const extra = topologyProblems(extraTopic, workerId, expectedTopology());
    expect(extra).toContain("topic audit is not in the code's topology");
    expect(extra).toContain("topic audit-deadletter is not in the code's topology");
    const noDeadLetters = withEdit("deploy/aca/modules/service-bus.bicep", (t) =>
      t.replace(/^ {2}\{ topic: 'worker-jobs-deadletter'.*\n/m, ""),
    );
    expect(topologyProblems(noDeadLetters, workerId, expectedTopology())).toEqual([
      "missing subscription worker-jobs-deadletter/matoolkit-orchestrator by orchestrator filter []",
    ]);
    const noFilter = withEdit("deploy/aca/modules/service-bus.bicep", (t) =>
      t.replace("filter: 'WorkerId = \\'${workerId}\\''", "filter: ''"),
    );
    expect(topologyProblems(noFilter, workerId, expectedTopology())).toEqual([
      "missing subscription worker-jobs/matoolkit-worker by worker filter [WorkerId = 'worker-01']",
      "subscription worker-jobs/matoolkit-worker by worker filter [] is not in the code's topology",
    ]);
    const shortLock = withEdit("deploy/aca/modules/service-bus.bicep", (t) =>
      t.replace("lockDuration: 'PT1M'", "lockDuration: 'PT30S'"),
    );
    expect(topologyProblems(shortLock, workerId, expectedTopology())).toEqual([
      'subscriptions: missing 1-minute lock (000 "Subscriptions")',
    ]);
  });
});

describe("identities and role assignments", () => {
  /**
   * What each service's code does with Azure, hence its roles. The outbox table is shared and
   * every relay publishes whichever rows it locks, so each SQL service may publish any topic the
   * outbox holds (orchestrator-events, worker-jobs, notifications).
   */
  function expectedAccess(): Map<string, string[]> {
    const outbox = [topics.orchestratorEvents, topics.workerJobs, topics.notifications];
    const sender = (topic: string) => `Azure Service Bus Data Sender on ${topic}`;
    const receiver = (s: { topic: string; name: string }) =>
      `Azure Service Bus Data Receiver on ${s.topic}/${s.name}`;
    const orchestratorSubscriptions = expectedTopology().subscriptions.filter(
      (s) => s.consumer === "orchestrator",
    );
    const consumedTopics = [
      orchestratorEventsSubscription,
      workerResultsSubscription,
      notificationsSubscription,
    ].map((s) => s.topic);
    const workerSubscription = expectedTopology().subscriptions.find((s) => s.consumer === "worker")!;
    const acr = "AcrPull on the registry";
    const appRole = "PostgreSQL role matoolkit_app (application tables)";
    // The webhook secrets key (compose.ts: keyVaultAccessFromEnv): the admin API creates and reads
    // it (mayCreate), the orchestrator only reads it.
    const secretsKey = (role: string) => `Key Vault ${role} on vault secretsKeyVault`;
    return new Map([
      ["admin-api", [...outbox.map(sender), acr, appRole, secretsKey("Secrets Officer")]],
      ["scheduler", [...outbox.map(sender), acr, appRole]],
      [
        "orchestrator",
        [
          ...outbox.map(sender),
          ...consumedTopics.map((topic) => sender(deadLetterTopicOf(topic))),
          ...orchestratorSubscriptions.map(receiver),
          acr,
          appRole,
          secretsKey("Secrets User"),
        ],
      ],
      [
        "worker",
        [
          sender(topics.workerResults),
          sender(deadLetterTopicOf(topics.workerJobs)),
          receiver(workerSubscription),
          acr,
          "Key Vault Secrets User on vault keyVault",
        ],
      ],
      ["scaler", [`Azure Service Bus Data Owner on ${topics.workerJobs}`]],
      ["migrate", [acr, "PostgreSQL Entra administrator"]],
      ["dapr-state", ["PostgreSQL role for the dapr_* tables"]],
    ]);
  }
  const sorted = (access: Map<string, string[]>) =>
    Object.fromEntries([...access].map(([who, what]) => [who, [...what].sort()]).sort());

  it("assigns only the allowed built-in roles, each scoped to a resource", () => {
    expect(roleDefinitionProblems(disk)).toEqual([]);
    const contributor = withEdit("deploy/aca/modules/registry.bicep", (t) =>
      t.replace("7f951dda-4ed3-4680-a7ca-43fe172d538d", "b24988ac-6180-42a0-ab88-20f7382dd24c"),
    );
    expect(roleDefinitionProblems(contributor)).toEqual([
      "deploy/aca/modules/registry.bicep: role definition b24988ac-6180-42a0-ab88-20f7382dd24c is not one of the allowed built-in roles",
    ]);
    const swapped = withEdit("deploy/aca/modules/foundation.bicep", (t) =>
      t.replace("      worker: principalIdOf.worker\n", "      worker: principalIdOf.orchestrator\n"),
    );
    expect(roleDefinitionProblems(swapped)).toEqual([
      "foundation.bicep: service-bus principal worker is the orchestrator identity",
    ]);
  });

  it("gives each identity exactly the access its service uses (the worker: no PostgreSQL)", () => {
    expect(sorted(identityAccess(disk, workerId))).toEqual(sorted(expectedAccess()));
    expect(needs.worker.sql).toBe(false);
  });

  it("fails when the orchestrator may write the secrets key, or the admin API may read the worker's certificate", () => {
    const orchestratorWrites = withEdit("deploy/aca/modules/foundation.bicep", (t) =>
      t.replace(
        "secretOfficerPrincipalIds: [principalIdOf['admin-api']]",
        "secretOfficerPrincipalIds: [principalIdOf['admin-api'], principalIdOf.orchestrator]",
      ),
    );
    expect(identityAccess(orchestratorWrites, workerId).get("orchestrator")).toContain(
      "Key Vault Secrets Officer on vault secretsKeyVault",
    );
    const adminReadsCertificate = withEdit("deploy/aca/modules/foundation.bicep", (t) =>
      t.replace(
        "secretReaderPrincipalIds: [principalIdOf.worker]",
        "secretReaderPrincipalIds: [principalIdOf.worker, principalIdOf['admin-api']]",
      ),
    );
    expect(identityAccess(adminReadsCertificate, workerId).get("admin-api")).toContain(
      "Key Vault Secrets User on vault keyVault",
    );
    for (const broken of [orchestratorWrites, adminReadsCertificate]) {
      expect(sorted(identityAccess(broken, workerId))).not.toEqual(sorted(expectedAccess()));
    }
  });

  it("fails when an identity gets more than its service uses", () => {
    const workerInPostgres = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace(
        "map(['admin-api', 'orchestrator', 'scheduler']",
        "map(['admin-api', 'orchestrator', 'scheduler', 'worker']",
      ),
    );
    expect(sorted(identityAccess(workerInPostgres, workerId))).not.toEqual(sorted(expectedAccess()));
    expect(identityAccess(workerInPostgres, workerId).get("worker")).toContain(
      "PostgreSQL role matoolkit_app (application tables)",
    );
    const workerSendsJobs = withEdit("deploy/aca/modules/service-bus.bicep", (t) =>
      t.replace(
        "  { who: 'worker', role: 'sender', topic: 'worker-results' }\n",
        "  { who: 'worker', role: 'sender', topic: 'worker-results' }\n  { who: 'worker', role: 'sender', topic: 'worker-jobs' }\n",
      ),
    );
    expect(identityAccess(workerSendsJobs, workerId).get("worker")).toContain(
      "Azure Service Bus Data Sender on worker-jobs",
    );
    expect(sorted(identityAccess(workerSendsJobs, workerId))).not.toEqual(sorted(expectedAccess()));
  });
});

describe("container apps against the code", () => {
  const apps = containerApps(disk, bicepParams);

  it("runs the four services of the image as their Dapr app ids and ports (dapr/README.md, platform config)", () => {
    expect(apps.map((app) => app.serviceName).sort()).toEqual([
      "admin-api",
      "orchestrator",
      "scheduler",
      "worker",
    ]);
    for (const app of apps) {
      const convention = appOf(app.serviceName);
      expect(app.command, app.symbol).toBe(app.serviceName);
      expect(imageCommands).toContain(app.command);
      expect(app.appId).toBe(convention.appId);
      expect(app.appPort).toBe(convention.appPort);
      expect(readmePorts.get(app.appId)).toBe(app.appPort);
      const config = platformConfigFromEnv(runtimeEnv(app.env), {
        usesSql: needs[app.serviceName as keyof typeof needs].sql,
      });
      expect(config.dapr?.appPort).toBe(app.appPort);
      expect(config.dapr?.appHost).toBe("0.0.0.0");
      // Only the stable publish API: ACA does not guarantee Dapr's alpha ones, bulk publish among
      // them (learn.microsoft.com/azure/container-apps/dapr-overview, "Limitations").
      expect(config.dapr?.bulkPublish, app.symbol).toBe(false);
      expect(config.adapters).toEqual({
        bus: "dapr",
        timers: "dapr-delayed-messages",
        idempotency: "dapr",
        workflow: "embedded",
      });
    }
  });

  it("exports traces over gRPC to the environment's OpenTelemetry agent, the only transport it takes", () => {
    // What the managed agent injects (learn.microsoft.com/azure/container-apps/opentelemetry-agents,
    // "Environment variables"; the endpoint is the page's example). The container's own values win.
    const agent = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.service.k8se-apps:4317/",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    };
    expect(disk.read("deploy/aca/modules/environment.bicep")).toMatch(
      /openTelemetryConfiguration: \{\s+tracesConfiguration: \{ destinations: \['appInsights'\] \}/,
    );
    for (const app of apps) {
      const env = { ...agent, ...runtimeEnv(app.env) };
      const telemetry = platformConfigFromEnv(env, {
        usesSql: needs[app.serviceName as keyof typeof needs].sql,
      }).telemetry;
      expect(otlpTracesProtocol(telemetry), app.symbol).toBe("grpc");
      expect(otlpTracesUrl(telemetry), app.symbol).toBe("http://otel.service.k8se-apps:4317/");
    }
  });

  it("runs a release image with Dapr, its app health and the probes; a placeholder revision with none of them", () => {
    // The release: liveness /healthz, readiness /readyz where they are served, Dapr app health.
    expect(containerAppShape(disk, false)).toEqual({
      daprEnabled: true,
      appHealthEnabled: true,
      appHealthPath: "/healthz",
      probes: ["Liveness /healthz healthPort", "Readiness /readyz healthPort"],
      args: "[command]",
      ingressTargetPort: "ingressTargetPort",
    });
    // The placeholder (mcr.microsoft.com/k8se/quickstart) listens on port 80 only: daprd would wait
    // for an app port it never opens, and our probes would fail.
    expect(containerAppShape(disk, true)).toMatchObject({
      daprEnabled: false,
      probes: [],
      args: "[]",
      ingressTargetPort: "placeholderPort",
    });
    expect(bicep(disk, "deploy/aca/modules/container-app.bicep").params).toContainEqual(
      expect.objectContaining({ name: "placeholderPort", defaultValue: "80" }),
    );
    // apps.bicep: an app is a placeholder exactly when it runs the placeholder image.
    const appsFile = bicep(disk, "deploy/aca/modules/apps.bicep");
    // Its recorded image only while its app exists: after `azd down` the image's registry is gone
    // (azd sets SERVICE_<NAME>_RESOURCE_EXISTS before each provision).
    const parameters = JSON.parse(disk.read("deploy/aca/main.parameters.json")) as {
      parameters: Record<string, { value: Record<string, string> }>;
    };
    for (const module of appsFile.modules.filter((m) => m.path === "container-app.bicep")) {
      const passed = passedParams(appsFile, module.body);
      const service = literalOf(passed.get("serviceName") ?? "") ?? "";
      const variable = service.toUpperCase().replaceAll("-", "_");
      expect(passed.get("image"), module.symbol).toBe(
        `imageOf(images, imagesExist, '${service}', placeholderImage)`,
      );
      expect(passed.get("placeholder"), module.symbol).toBe(`${passed.get("image")} == placeholderImage`);
      expect(parameters.parameters.serviceImages?.value[service]).toBe(`\${SERVICE_${variable}_IMAGE_NAME=}`);
      expect(parameters.parameters.serviceImagesExist?.value[service]).toBe(
        `\${SERVICE_${variable}_RESOURCE_EXISTS=false}`,
      );
    }
    expect(appsFile.funcs.get("imageOf")?.body).toBe(
      "(deployed[?service] ?? 'false') == 'true' && !empty(images[?service] ?? '') ? images[service] : placeholder",
    );
    for (const app of apps) {
      const env = runtimeEnv(app.env);
      // The admin API serves them on PORT; every other service on its Dapr app port.
      expect(app.healthPort, app.symbol).toBe(
        app.serviceName === "admin-api" ? Number(env.PORT) : app.appPort,
      );
    }
  });

  it("fails when a placeholder revision enables Dapr or probes, or a release revision lacks app health", () => {
    const daprAlways = withEdit("deploy/aca/modules/container-app.bicep", (t) =>
      t.replace("enabled: !placeholder", "enabled: true"),
    );
    expect(containerAppShape(daprAlways, true).daprEnabled).toBe(true);
    const probesAlways = withEdit("deploy/aca/modules/container-app.bicep", (t) =>
      t.replace("probes: placeholder ? [] : [", "probes: ["),
    );
    expect(containerAppShape(probesAlways, true).probes).toHaveLength(2);
    const noHealth = withEdit("deploy/aca/modules/container-app.bicep", (t) =>
      t.replace(
        "appHealth: {\n          enabled: true",
        "appHealth: {\n          enabled: !placeholder && false",
      ),
    );
    expect(containerAppShape(noHealth, false).appHealthEnabled).toBe(false);
  });

  it("scales as the aca preset requires: orchestrator and scheduler one replica, the worker 0..N on its subscription", () => {
    const bySevice = new Map(apps.map((app) => [app.serviceName, app]));
    expect(bySevice.get("orchestrator")).toMatchObject({ minReplicas: 1, maxReplicas: "1" });
    expect(bySevice.get("scheduler")).toMatchObject({ minReplicas: 1, maxReplicas: "1" });
    expect(bySevice.get("admin-api")).toMatchObject({ ingressExternal: true, ingressPort: 8080 });
    const worker = bySevice.get("worker")!;
    expect(worker.minReplicas).toBe(0);
    expect(worker.ingressPort).toBe(0);
    expect(worker.scaleRules).toMatch(/type: 'azure-servicebus'/);
    expect(worker.scaleRules).toMatch(/identity: ids\.scaler/);
    expect(worker.scaleRules).toMatch(/topicName: 'worker-jobs'/);
    expect(worker.scaleRules).toMatch(/subscriptionName: workerAppId/);
    expect(worker.platformOnlyIdentities).toBe("[ids.scaler]");
  });

  it("sets only variables the code reads, and each service's parsers accept its environment", () => {
    for (const app of apps) {
      const names = app.env.map((entry) => entry.name);
      expect(
        names.filter((name) => !isRead(name)),
        `${app.symbol}: variables no code reads`,
      ).toEqual([]);
      expect(new Set(names).size, `${app.symbol}: a variable twice`).toBe(names.length);
      const env = runtimeEnv(app.env);
      expect(() => parseServiceConfig(app.serviceName, env)).not.toThrow();
      expect(env.MATOOLKIT_RUNTIME).toBe("aca");
      if (app.serviceName === "worker") {
        expect(env.DATABASE_URL, "the worker has no SQL access").toBeUndefined();
      } else {
        expect(env).toMatchObject({ DATABASE_AUTH: "entra", MATOOLKIT_MIGRATE_ON_START: "false" });
        expect(new URL(env.DATABASE_URL!).password).toBe("");
      }
    }
    // The worker without a target tenant sets none of the tenant's variables (the parser refuses them).
    const noTenant = containerApps(disk, new Map([...bicepParams, ["tenantMode", "none"]])).find(
      (app) => app.serviceName === "worker",
    )!;
    expect(() => parseServiceConfig("worker", runtimeEnv(noTenant.env))).not.toThrow();
    const migrate = migrateJobEnv(disk, bicepParams);
    expect(migrate.map((entry) => entry.name).filter((name) => !isRead(name))).toEqual([]);
    expect(() => platformConfigFromEnv(runtimeEnv(migrate))).not.toThrow();
  });

  it("fails on a variable no code reads, and on a service missing one its code requires", () => {
    const typo = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace(
        "{ name: 'MATOOLKIT_DAPR_APP_HOST', value: '0.0.0.0' }",
        "{ name: 'MATOOLKIT_DAPR_APPHOST', value: '0.0.0.0' }",
      ),
    );
    const typoApp = containerApps(typo, bicepParams)[0]!;
    expect(typoApp.env.map((entry) => entry.name).filter((name) => !isRead(name))).toEqual([
      "MATOOLKIT_DAPR_APPHOST",
    ]);
    const noDatabase = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace("  { name: 'DATABASE_URL', value: databaseUrlFor(role, url) }\n", ""),
    );
    const orchestrator = containerApps(noDatabase, bicepParams).find(
      (app) => app.serviceName === "orchestrator",
    )!;
    expect(() => parseServiceConfig("orchestrator", runtimeEnv(orchestrator.env))).toThrow(/DATABASE_URL/);
    const noCertificate = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace("      { name: 'MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME', value: targetCertificateName }\n", ""),
    );
    const worker = containerApps(noCertificate, bicepParams).find((app) => app.serviceName === "worker")!;
    expect(() => parseServiceConfig("worker", runtimeEnv(worker.env))).toThrow(
      /MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME/,
    );
  });
});

describe("the webhook secrets key on Container Apps", () => {
  /** Per service: where its secrets key comes from (the code's own parser), and the vault URL's Bicep. */
  function keySources(sources: Sources) {
    const apps = bicep(sources, "deploy/aca/modules/apps.bicep");
    return new Map(
      containerApps(sources, bicepParams).map((app) => [
        app.serviceName,
        {
          source: secretKeySourceFromEnv(runtimeEnv(app.env), "/data"),
          vault: /secretsKeyEnv\(([^)]*)\)/.exec(apps.vars.get(`${app.symbol}Env`) ?? "")?.[1],
        },
      ]),
    );
  }

  it("gives the admin API and the orchestrator one Key Vault secret, in the vault whose roles they hold", () => {
    const byService = keySources(disk);
    for (const service of ["admin-api", "orchestrator"]) {
      expect(byService.get(service)?.source, service).toMatchObject({
        kind: "key-vault",
        secretName: "matoolkit-secrets-key",
      });
      expect(byService.get(service)?.vault, service).toBe("secretsKeyVaultUri");
    }
    expect(disk.read("deploy/aca/main.bicep")).toMatch(
      /^ {4}secretsKeyVaultUri: foundation\.outputs\.secretsKeyVaultUri$/m,
    );
    // The scheduler and the worker never seal or open a webhook secret.
    expect(byService.get("scheduler")?.vault).toBeUndefined();
    expect(byService.get("worker")?.vault).toBeUndefined();
    const foundation = disk.read("deploy/aca/modules/foundation.bicep");
    expect(foundation).toMatch(/^output secretsKeyVaultUri string = secretsKeyVault\.outputs\.uri$/m);
    const vault = disk.read("deploy/aca/modules/key-vault.bicep");
    expect(vault).toMatch(/enableRbacAuthorization: true/);
    expect(vault).toMatch(/enableSoftDelete: true/);
    expect(vault).toMatch(/enablePurgeProtection: true/);
  });

  it("names each vault anew when the environment is created again (purge protection keeps a deleted vault's name)", () => {
    expect(keyVaultNameProblems(disk)).toEqual([]);
    const fixed = withEdit("deploy/aca/modules/key-vault.bicep", (t) =>
      t.replace("uniqueString(resourceGroup().id, nameSeed)", "uniqueString(resourceGroup().id)"),
    );
    expect(keyVaultNameProblems(fixed)).toEqual([
      "deploy/aca/modules/key-vault.bicep: the vault name (take('${namePrefix}-${name}-${uniqueString(resourceGroup().id)}', 24)) is the same each time the environment is created: after azd down, the soft-deleted vault keeps it for the retention period",
    ]);
    const constantSeed = withEdit("deploy/aca/modules/foundation.bicep", (t) =>
      t.replace(
        "    nameSeed: principalIdOf.migrate\n    namePrefix: 'kvs'",
        "    nameSeed: name\n    namePrefix: 'kvs'",
      ),
    );
    expect(keyVaultNameProblems(constantSeed)).toEqual([
      "foundation.bicep: module secretsKeyVault passes nameSeed = name, not a managed identity's principal id (made anew with the environment)",
    ]);
  });

  it("fails when a service lacks the vault (it would make a key of its own), or the template makes the key", () => {
    const noVault = withEdit("deploy/aca/modules/apps.bicep", (t) =>
      t.replace(
        "  sqlEnv(names.orchestrator, clientIds.orchestrator, databaseUrl),\n  secretsKeyEnv(secretsKeyVaultUri)\n",
        "  sqlEnv(names.orchestrator, clientIds.orchestrator, databaseUrl)\n",
      ),
    );
    expect(keySources(noVault).get("orchestrator")?.source.kind).toBe("data-dir");
    const generated = withEdit("deploy/aca/main.bicep", (t) => `${t}\nparam secretsKey string = newGuid()\n`);
    expect(secretProblems(generated)).toEqual([
      "deploy/aca/main.bicep: generates a value at deployment (newGuid), which each deployment would replace",
    ]);
  });
});

describe("Dapr components in Container Apps' schema", () => {
  const apps = containerApps(disk, bicepParams);

  it("creates in Bicep the components of components/azure, scoped to every app that uses them", () => {
    const shapes = bicepComponents(disk, workerAppId);
    expect(shapes.map((shape) => shape.name).sort()).toEqual([
      "matoolkit-pubsub-admin-api",
      "matoolkit-pubsub-orchestrator",
      "matoolkit-pubsub-scheduler",
      "matoolkit-pubsub-worker",
      "matoolkit-state",
    ]);
    expect(componentProblems("environment.bicep", shapes, referenceComponents, componentUsers(apps))).toEqual(
      [],
    );
    // The state store authenticates as the dapr-state identity: every app must carry it.
    for (const app of apps) expect(app.extraIdentities, app.symbol).toContain("ids['dapr-state']");
    expect(disk.read("deploy/aca/modules/environment.bicep")).toMatch(
      /name: 'azureClientId', value: clientIds\['dapr-state'\]/,
    );
  });

  it("ships the same components as deploy/aca/components/*.yaml, valid against Container Apps' schema", () => {
    const files = componentFiles(disk);
    expect(files.problems).toEqual([]);
    expect(
      componentProblems("deploy/aca/components", files.shapes, referenceComponents, componentUsers(apps)),
    ).toEqual([]);
    const bicepShapes = bicepComponents(disk, workerAppId);
    for (const shape of files.shapes) {
      const twin = bicepShapes.find((candidate) => candidate.name === shape.name);
      expect(twin, shape.name).toBeDefined();
      expect({ ...shape, metadataNames: [...shape.metadataNames].sort() }).toEqual({
        ...twin,
        metadataNames: [...twin!.metadataNames].sort(),
      });
    }
  });

  it("fails on a misspelt metadata field, a missing scope, or the Kubernetes schema in a components file", () => {
    const misspelt = withEdit("deploy/aca/modules/environment.bicep", (t) =>
      t.replace("{ name: 'lockRenewalInSec', value: '20' }", "{ name: 'lockRenewalSec', value: '20' }"),
    );
    expect(
      componentProblems(
        "environment.bicep",
        bicepComponents(misspelt, workerAppId),
        referenceComponents,
        componentUsers(apps),
      ),
    ).toContain(
      "environment.bicep matoolkit-pubsub-admin-api: metadata azureClientId,defaultMessageTimeToLiveInSec,disableEntityManagement,handlerTimeoutInSec,lockDurationInSec,lockRenewalSec,maxDeliveryCount,namespaceName, components/azure has azureClientId,defaultMessageTimeToLiveInSec,disableEntityManagement,handlerTimeoutInSec,lockDurationInSec,lockRenewalInSec,maxDeliveryCount,namespaceName",
    );
    const unscoped = withEdit("deploy/aca/modules/environment.bicep", (t) =>
      t.replace("      workerAppId\n", ""),
    );
    expect(
      componentProblems(
        "environment.bicep",
        bicepComponents(unscoped, workerAppId),
        referenceComponents,
        componentUsers(apps),
      ),
    ).toEqual(["environment.bicep matoolkit-state: scopes lack matoolkit-worker, which uses it"]);
    const kubernetes = withEdit("deploy/aca/components/statestore.yaml", (t) =>
      t.replace(
        "componentType: state.postgresql\nversion: v2\n",
        "spec:\n  type: state.postgresql\n  version: v2\n",
      ),
    );
    expect(componentFiles(kubernetes).problems).toHaveLength(1);
    expect(componentFiles(kubernetes).problems[0]).toMatch(/statestore\.yaml: .*Unrecognized key/);
  });
});

describe("azure.yaml", () => {
  it("deploys the image's services from the one Dockerfile, with hooks that exist and read only the template's outputs", () => {
    const services = containerApps(disk, bicepParams).map((app) => app.serviceName);
    expect(azureYamlProblems(disk, imageCommands, services)).toEqual([]);
    const yaml = parse(disk.read("azure.yaml")) as { hooks: Record<string, { run: string }> };
    // Migrations before any app gets the release (predeploy), never after it: azd's deploy waits
    // for each new revision, which refuses a schema behind its release (database.schema_outdated).
    expect(yaml.hooks).toMatchObject({
      postprovision: { run: "deploy/aca/hooks/migrate.sh postprovision" },
      predeploy: { run: "deploy/aca/hooks/migrate.sh predeploy" },
    });
    expect(Object.keys(yaml.hooks).sort()).toEqual(["postprovision", "predeploy"]);
    expect(statSync(join(root, "deploy/aca/hooks/migrate.sh")).mode & 0o111).not.toBe(0);
    expect(migrateJobEnv(disk, bicepParams).map((entry) => entry.name)).toContain("DATABASE_URL");
    expect(disk.read("deploy/aca/modules/apps.bicep")).toMatch(/args: \['migrate'\]/);
  });

  it("fails on a service that is no command of the image, a missing Dockerfile, or a hook variable nobody outputs", () => {
    const services = containerApps(disk, bicepParams).map((app) => app.serviceName);
    const renamed = withEdit("azure.yaml", (t) => t.replace("  scheduler:\n", "  timer:\n"));
    expect(azureYamlProblems(renamed, imageCommands, services)).toEqual([
      "azure.yaml: service timer is no command of the image",
      "azure.yaml: no service scheduler",
    ]);
    const noDockerfile = withEdit("azure.yaml", (t) =>
      t.replace(
        "path: Dockerfile\n      context: .\n  orchestrator",
        "path: Dockerfile.aca\n      context: .\n  orchestrator",
      ),
    );
    expect(azureYamlProblems(noDockerfile, imageCommands, services)).toEqual([
      "azure.yaml: service admin-api: Dockerfile.aca does not exist",
    ]);
    const unknownOutput = withEdit("deploy/aca/hooks/migrate.sh", (t) =>
      t.replace("${MIGRATE_JOB_NAME:?}", "${MIGRATION_JOB:?}"),
    );
    expect(azureYamlProblems(unknownOutput, imageCommands, services)).toEqual([
      "deploy/aca/hooks/migrate.sh: reads MIGRATION_JOB, which main.bicep does not output",
    ]);
  });
});
