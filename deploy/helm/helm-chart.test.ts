/**
 * The Helm chart (deploy/helm/matoolkit), rendered by the real Helm: the pinned helm built from
 * its Go module (scripts/helm/helm-pin.ts; `npm test`'s pretest builds it, and this file too when
 * it is run alone on a fresh machine) runs `helm lint` and `helm template` on the default values
 * and every ci/*-values.yaml. The rendered objects are then checked against the Kubernetes
 * schemas (kubernetes-models), the Dapr schemas the repository already validates components/
 * with, zod schemas of the KEDA resources, and the code: app ids, ports, variables, subscriptions
 * and commands.
 */
import Ajv from "ajv";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { topics } from "@matoolkit/domain";
import { platformConfigFromEnv } from "../../libs/platform/src/platform-config.ts";
import * as batchV1 from "kubernetes-models/batch/v1";
import * as appsV1 from "kubernetes-models/apps/v1";
import * as networkingV1 from "kubernetes-models/networking.k8s.io/v1";
import * as policyV1 from "kubernetes-models/policy/v1";
import * as coreV1 from "kubernetes-models/v1";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { z } from "zod";
import { unknownMetadataFieldProblems } from "../../scripts/dapr-config/component-metadata-fields.ts";
import {
  componentSchema,
  configurationSchema,
  resiliencySchema,
} from "../../scripts/dapr-config/dapr-config-schemas.ts";
import { daprApps } from "../../scripts/dapr-config/dapr-conventions.ts";
import { parseDaprYaml } from "../../scripts/dapr-config/load-dapr-files.ts";
import { installHelm } from "../../scripts/helm/helm-pin.ts";
import { pgConnectionConfig } from "../../libs/db/src/connection.ts";
import { adminApiConfigFromEnv } from "../../services/admin-api/src/admin-api-config.ts";
import { authConfigFromEnv } from "../../libs/auth/src/auth-config.ts";
import { orchestratorConfigFromEnv } from "../../services/orchestrator/src/orchestrator-config.ts";
import { schedulerConfigFromEnv } from "../../services/scheduler/src/scheduler-config.ts";
import { workerConfigFromEnv } from "../../services/worker/src/worker-config.ts";

const root = join(import.meta.dirname, "..", "..");
const chartDir = join(root, "deploy", "helm", "matoolkit");
const ciFiles = readdirSync(join(chartDir, "ci"))
  .filter((file) => file.endsWith("-values.yaml"))
  .sort();

/** The image's commands (deployment contract). */
const imageCommands = ["all-in-one", "admin-api", "orchestrator", "scheduler", "worker", "migrate"];

/** helm and kube-validate: built by the pretest hook (then found in milliseconds). */
let helm = "";
let kubeValidate = "";

interface RenderResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(mode: "template" | "lint", args: readonly string[]): RenderResult {
  const command =
    mode === "template"
      ? ["template", "matoolkit", chartDir, "--namespace", "matoolkit", ...args]
      : ["lint", chartDir, "--namespace", "matoolkit", ...args];
  const result = spawnSync(helm, command, {
    encoding: "utf8",
    // No repositories, plugins or registry logins of the machine's user.
    env: { ...process.env, HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const helmHome = join(tmpdir(), "matoolkit-helm-home");

const k8sObject = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({
    name: z.string(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
});
type K8sObject = z.infer<typeof k8sObject> & { readonly source: string; readonly text: string };

function render(valuesFile: string | undefined, extra: readonly string[] = []): K8sObject[] {
  const args = [...(valuesFile === undefined ? [] : ["-f", join(chartDir, "ci", valuesFile)]), ...extra];
  const result = run("template", args);
  if (result.status !== 0) throw new Error(`render failed: ${result.stderr}`);
  return result.stdout
    .split(/^---\n/m)
    .filter((doc) => doc.trim() !== "")
    .map((text) => {
      const source = /^# Source: (.+)$/m.exec(text)?.[1] ?? "?";
      return { ...k8sObject.parse(parse(text)), source, text };
    });
}

// ---------------------------------------------------------------------------------------------
// Schemas: Kubernetes' (kubernetes-models), the Dapr and KEDA CRDs' published ones, and
// stricter ones of the custom resources (Dapr: the repository's own; KEDA: its documented fields)

const kubernetesKinds: Record<string, { validate(object: unknown): void }> = {
  "v1/ServiceAccount": { validate: (o) => new coreV1.ServiceAccount(o as never).validate() },
  "v1/Service": { validate: (o) => new coreV1.Service(o as never).validate() },
  "v1/Secret": { validate: (o) => new coreV1.Secret(o as never).validate() },
  "apps/v1/Deployment": { validate: (o) => new appsV1.Deployment(o as never).validate() },
  "batch/v1/Job": { validate: (o) => new batchV1.Job(o as never).validate() },
  "policy/v1/PodDisruptionBudget": {
    validate: (o) => new policyV1.PodDisruptionBudget(o as never).validate(),
  },
  "networking.k8s.io/v1/Ingress": { validate: (o) => new networkingV1.Ingress(o as never).validate() },
};

const kedaMetadata = z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() });
/** keda.sh/v1alpha1 ScaledObject (KEDA 2.x reference: "Scaling Deployments"), azure-servicebus trigger. */
const scaledObjectSchema = z.strictObject({
  apiVersion: z.literal("keda.sh/v1alpha1"),
  kind: z.literal("ScaledObject"),
  metadata: kedaMetadata,
  spec: z.strictObject({
    scaleTargetRef: z.strictObject({ name: z.string().min(1), kind: z.string().optional() }),
    minReplicaCount: z.number().int().min(0),
    maxReplicaCount: z.number().int().min(1),
    pollingInterval: z.number().int().positive(),
    cooldownPeriod: z.number().int().positive(),
    triggers: z
      .array(
        z.strictObject({
          type: z.literal("azure-servicebus"),
          metadata: z.strictObject({
            namespace: z.string().regex(/^[a-zA-Z][a-zA-Z0-9-]{4,48}[a-zA-Z0-9]$/, "a namespace name"),
            topicName: z.string().min(1),
            subscriptionName: z.string().min(1),
            messageCount: z.string().regex(/^\d+$/),
            activationMessageCount: z.string().regex(/^\d+$/),
          }),
          authenticationRef: z.strictObject({ name: z.string().min(1) }),
        }),
      )
      .length(1),
  }),
});
const triggerAuthenticationSchema = z.strictObject({
  apiVersion: z.literal("keda.sh/v1alpha1"),
  kind: z.literal("TriggerAuthentication"),
  metadata: kedaMetadata,
  spec: z.strictObject({
    podIdentity: z.strictObject({ provider: z.literal("azure-workload"), identityId: z.guid() }),
  }),
});

/**
 * The published CRD schemas of the Dapr and KEDA resources the chart renders (excerpts vendored
 * in crd-schemas/, each naming its source), read as the API server's strict field validation
 * does (`kubectl apply --validate=strict`): a field the schema does not list is an error, except
 * where the CRD keeps unknown fields (x-kubernetes-preserve-unknown-fields).
 */
const crdValidators = (() => {
  const ajv = new Ajv({ allErrors: true, nullable: true, unknownFormats: "ignore", logger: false });
  const closed = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(closed);
    if (node === null || typeof node !== "object") return node;
    const schema = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)]));
    if (
      schema.properties !== undefined &&
      schema.additionalProperties === undefined &&
      schema["x-kubernetes-preserve-unknown-fields"] !== true
    )
      schema.additionalProperties = false;
    return schema;
  };
  const validators = new Map<string, (object: unknown) => void>();
  for (const file of readdirSync(join(root, "deploy", "helm", "crd-schemas"))) {
    const schemas = parse(readFileSync(join(root, "deploy", "helm", "crd-schemas", file), "utf8")) as Record<
      string,
      object
    >;
    for (const [key, schema] of Object.entries(schemas)) {
      const validate = ajv.compile(closed(schema) as object);
      validators.set(key, (object) => {
        if (validate(object) !== true)
          throw new Error(`${key} (${file}): ${ajv.errorsText(validate.errors)}`);
      });
    }
  }
  return validators;
})();

/**
 * Built-in kinds decoded strictly by Kubernetes' own types (kube-validate, built with helm): an
 * unknown or duplicated field fails, as `kubectl apply --validate=strict`. One entry per
 * document: its kind, and its error or whether it is a custom resource (skipped).
 */
function strictDecode(
  manifests: string,
): { kind: string; name: string; error?: string; skipped?: boolean }[] {
  const result = spawnSync(kubeValidate, [], { input: manifests, encoding: "utf8" });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`kube-validate failed: ${result.stderr}`);
  return result.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { kind: string; name: string; error?: string; skipped?: boolean });
}

function validateObject(object: K8sObject): void {
  const key = `${object.apiVersion}/${object.kind}`;
  const { source: _source, text: _text, ...plain } = object;
  const kubernetes = kubernetesKinds[key];
  if (kubernetes) return kubernetes.validate(plain);
  const crd = crdValidators.get(key);
  if (crd === undefined) throw new Error(`${object.source}: no CRD schema for ${key}`);
  crd(plain);
  switch (key) {
    case "dapr.io/v1alpha1/Component": {
      componentSchema.parse(plain);
      const [document] = parseDaprYaml(object.source, object.text);
      expect(unknownMetadataFieldProblems(document!)).toEqual([]);
      return;
    }
    case "dapr.io/v1alpha1/Resiliency":
      resiliencySchema.parse(plain);
      return;
    case "dapr.io/v1alpha1/Configuration":
      configurationSchema.parse(plain);
      return;
    case "keda.sh/v1alpha1/ScaledObject":
      scaledObjectSchema.parse(plain);
      return;
    case "keda.sh/v1alpha1/TriggerAuthentication":
      triggerAuthenticationSchema.parse(plain);
      return;
    default:
      throw new Error(`${object.source}: no schema for ${key}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Helm's order of creation

const hookOf = (object: K8sObject) => {
  const annotations = object.metadata.annotations ?? {};
  const events = annotations["helm.sh/hook"];
  return events === undefined
    ? undefined
    : {
        events: events.split(","),
        weight: Number(annotations["helm.sh/hook-weight"] ?? "0"),
        deletePolicies: (annotations["helm.sh/hook-delete-policy"] ?? "").split(",").filter(Boolean),
      };
};

/**
 * The hooks of one event in the order Helm creates them: by weight, then by name, stable over
 * the kind order `helm template` prints them in (helm.sh/helm/v3 pkg/action/hooks.go: execHook,
 * hookByWeight). Helm waits for each (a Job until it completes) and creates the release's
 * ordinary resources only after every pre-install / pre-upgrade hook succeeded.
 */
function hookSequence(objects: readonly K8sObject[], event: string): K8sObject[] {
  return objects
    .filter((object) => hookOf(object)?.events.includes(event))
    .map((object, index) => ({ object, index }))
    .sort(
      (a, b) =>
        hookOf(a.object)!.weight - hookOf(b.object)!.weight ||
        (a.object.metadata.name < b.object.metadata.name
          ? -1
          : a.object.metadata.name > b.object.metadata.name
            ? 1
            : 0) ||
        a.index - b.index,
    )
    .map(({ object }) => object);
}

/** What a Dapr sidecar loads once, when it starts (docs.dapr.io/operations/components/component-updates). */
const daprSidecarKinds = ["Component", "Configuration", "Resiliency"];

// ---------------------------------------------------------------------------------------------
// The code's side

/** Source text of the code (not tests): where a variable the chart sets must be read. */
const codeText = (() => {
  const texts: string[] = [];
  for (const base of ["libs", "services", join("scripts", "build")]) {
    const dir = join(root, base);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name);
      if (!entry.isFile() || path.includes("node_modules") || path.includes(`${join("dist", "")}`)) continue;
      if (!/\.(ts|mts|mjs|js)$/.test(entry.name) || /\.test\.ts$/.test(entry.name)) continue;
      texts.push(readFileSync(path, "utf8"));
    }
  }
  return texts.join("\n");
})();

/** `matoolkit-orchestrator` 3001/3501/50001 in dapr/README.md: app id -> app port. */
const readmeAppPorts = new Map(
  [
    ...readFileSync(join(root, "dapr", "README.md"), "utf8").matchAll(
      /`(matoolkit-[a-z-]+)` (\d+)\/\d+\/\d+/g,
    ),
  ].map((match) => [match[1]!, Number(match[2])]),
);

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
interface Pod {
  readonly annotations: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly serviceAccountName: string;
  readonly container: {
    args: string[];
    env: EnvVar[];
    livenessProbe: { httpGet: { path: string; port: number } };
    readinessProbe: { httpGet: { path: string; port: number } };
    securityContext: { readOnlyRootFilesystem: boolean };
    volumeMounts: { name: string; mountPath: string }[];
  };
  readonly spec: {
    securityContext: { runAsNonRoot: boolean; runAsUser: number };
    volumes: { name: string; emptyDir?: object }[];
  };
}

function podOf(object: K8sObject): Pod {
  const template = (object as unknown as { spec: { template: { metadata: Pod; spec: Pod["spec"] } } }).spec
    .template;
  const spec = template.spec as Pod["spec"] & { containers: Pod["container"][]; serviceAccountName: string };
  expect(spec.containers).toHaveLength(1);
  return {
    annotations: template.metadata.annotations ?? {},
    labels: template.metadata.labels ?? {},
    serviceAccountName: spec.serviceAccountName,
    container: spec.containers[0]!,
    spec,
  };
}

/**
 * What the container sees at run time: its variables (secrets filled with samples), plus what
 * the Dapr injector (DAPR_HTTP_PORT, DAPR_GRPC_PORT) and the workload identity webhook
 * (AZURE_*) add to every container of a pod using them.
 */
function runtimeEnv(pod: Pod, serviceAccount: K8sObject | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of pod.container.env) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.name === "DATABASE_URL")
      env[variable.name] = "postgres://matoolkit:sample@db:5432/matoolkit";
    else if (variable.name === "MATOOLKIT_SECRETS_KEY")
      env[variable.name] = Buffer.alloc(32, 7).toString("base64");
    else env[variable.name] = "sample-secret";
  }
  if (pod.annotations["dapr.io/enabled"] === "true") {
    env.DAPR_HTTP_PORT = "3500";
    env.DAPR_GRPC_PORT = "50001";
  }
  if (pod.labels["azure.workload.identity/use"] === "true") {
    env.AZURE_CLIENT_ID = serviceAccount?.metadata.annotations?.["azure.workload.identity/client-id"] ?? "";
    env.AZURE_TENANT_ID = "00000000-0000-0000-0000-0000000000f1";
    env.AZURE_FEDERATED_TOKEN_FILE = "/var/run/secrets/azure/tokens/azure-identity-token";
    env.AZURE_AUTHORITY_HOST = "https://login.microsoftonline.com/";
  }
  return env;
}

/** Runs each service's own configuration parsers on the container's environment. */
function parseServiceConfig(service: string, env: Record<string, string>): void {
  switch (service) {
    case "admin-api":
      platformConfigFromEnv(env);
      adminApiConfigFromEnv(env);
      authConfigFromEnv(env);
      return;
    case "orchestrator":
      platformConfigFromEnv(env);
      orchestratorConfigFromEnv(env);
      return;
    case "scheduler":
      platformConfigFromEnv(env);
      schedulerConfigFromEnv(env);
      return;
    case "worker":
      // The worker's platform config in Dapr mode needs no DATABASE_URL (contract): parsed as its
      // compose part does (usesSql: false); the absence of SQL is asserted by the caller.
      platformConfigFromEnv(env, { usesSql: false });
      workerConfigFromEnv(env);
      return;
    default:
      throw new Error(`unknown service ${service}`);
  }
}

/** The values key of each SQL process (`<key>.database.user`, `<key>.serviceAccount.clientId`). */
const sqlValuesKeys: Record<string, string> = {
  "admin-api": "adminApi",
  orchestrator: "orchestrator",
  scheduler: "scheduler",
  migrate: "migrations",
};

/**
 * The PostgreSQL role a DATABASE_URL logs in as with Entra: the user name pg takes from it
 * (libs/db/src/connection.ts, the services' own parsing; pg-connection-string percent-decodes it).
 */
function roleOf(url: string): string | undefined {
  return pgConnectionConfig(url, () => Promise.resolve("token")).user;
}

interface SqlLogin {
  readonly service: string;
  readonly auth: string | undefined;
  readonly clientId: string | undefined;
  readonly url: EnvVar;
}

/** How each SQL process (the Deployments but the worker's, and the migrate Job) logs in to PostgreSQL. */
function sqlLogins(objects: readonly K8sObject[]): SqlLogin[] {
  return objects
    .filter((object) => object.kind === "Deployment" || object.kind === "Job")
    .map(podOf)
    .filter((pod) => pod.container.args[0] !== "worker")
    .map((pod) => {
      const env = new Map(pod.container.env.map((variable) => [variable.name, variable]));
      return {
        service: pod.container.args[0]!,
        auth: env.get("DATABASE_AUTH")?.value,
        clientId: env.get("DATABASE_AUTH_CLIENT_ID")?.value,
        url: env.get("DATABASE_URL")!,
      };
    });
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  // Milliseconds when built (npm test's pretest builds it); minutes on a fresh machine.
  ({ binary: helm, kubeValidate } = await installHelm({
    env: process.env,
    log: (line) => console.log(`helm: ${line}`),
  }));
}, 1_200_000);

describe("helm template and helm lint (the real Helm)", () => {
  it("lints the chart with its default values: nothing but Helm's notes (INFO)", () => {
    const result = run("lint", []);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it("fails with Helm's message when a required value is missing, naming the value", () => {
    const missing = run("template", [
      "-f",
      join(chartDir, "ci", "minimal-values.yaml"),
      "--set",
      "broker.servicebus.namespace=",
    ]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(
      /Error: execution error at \(matoolkit\/templates\/[a-z-]+\.yaml:\d+:\d+\): broker\.servicebus\.namespace is required/,
    );
  });

  it("fails on values.yaml alone, naming the first required value", () => {
    const bare = run("template", []);
    expect(bare.status).toBe(1);
    expect(bare.stderr).toMatch(/is required/);
  });

  it.each([
    ["orchestrator.replicas=0", "orchestrator.replicas must be a whole number of at least 1, not 0"],
    ["orchestrator.replicas=1.5", "orchestrator.replicas must be a whole number of at least 1, not 1.5"],
    ["scheduler.replicas=3", "scheduler.replicas is not a value"],
    ["broker.type=nats", 'broker.type must be servicebus, redis, rabbitmq or kafka, not "nats"'],
    ["database.auth=token", 'database.auth must be entra or password, not "token"'],
    ["runtime=embedded", 'runtime must be dapr or aca, not "embedded"'],
    ["workloadIdentity.clientId=", "workloadIdentity.clientId is required"],
    ["database.url=", "database.url is required"],
    ["image.repository=", "image.repository is required"],
    ["adminApi.auth.clientId=", "adminApi.auth.clientId is required"],
    ["stateStore.postgresql.user=", "stateStore.postgresql.user is required"],
    ["broker.servicebus.namespace=sb-x.servicebus.windows.net", "give the namespace name"],
    [
      "worker.keda.minReplicaCount=0",
      'worker pool matoolkit-worker: keda.minReplicaCount 0 needs its subscription matoolkit-worker on worker-jobs to exist before the pool first scales to zero; create the subscriptions with your infrastructure and set broker.servicebus.disableEntityManagement "true"',
    ],
  ])("refuses --set %s", (assignment, message) => {
    const result = run("template", ["-f", join(chartDir, "ci", "minimal-values.yaml"), "--set", assignment]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
  });

  it("runs several orchestrator replicas on runtime dapr, and refuses more than one on aca", () => {
    const deployment = (objects: K8sObject[]) =>
      objects.find(
        (o) => o.kind === "Deployment" && o.metadata.name === "matoolkit-orchestrator",
      ) as unknown as {
        spec: { replicas: number; strategy: { type: string } };
      };
    expect(deployment(render("minimal-values.yaml")).spec).toMatchObject({
      replicas: 1,
      strategy: { type: "Recreate" },
    });
    expect(
      deployment(render("minimal-values.yaml", ["--set", "orchestrator.replicas=3"])).spec,
    ).toMatchObject({
      replicas: 3,
      strategy: { type: "Recreate" },
    });
    expect(deployment(render("minimal-values.yaml", ["--set", "runtime=aca"])).spec.replicas).toBe(1);
    const aca = run("template", [
      "-f",
      join(chartDir, "ci", "minimal-values.yaml"),
      "--set",
      "runtime=aca",
      "--set",
      "orchestrator.replicas=2",
    ]);
    expect(aca.status).toBe(1);
    expect(aca.stderr).toContain(
      "orchestrator.replicas 2 needs runtime dapr: the aca runtime's in-process workflow engine keeps each batch's workflow in the process that started it",
    );
  });

  it("refuses a worker pool that reuses the default pool's worker id", () => {
    const dir = mkdtempSync(join(tmpdir(), "matoolkit-helm-"));
    try {
      const file = join(dir, "pool.yaml");
      writeFileSync(file, 'workerPools:\n  - name: "02"\n    workerId: worker-01\n');
      const result = run("template", ["-f", join(chartDir, "ci", "minimal-values.yaml"), "-f", file]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('workerPools "02": set its own workerId');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints every document with a # Source comment, hooks last, in Helm's install order", () => {
    const objects = render("minimal-values.yaml");
    const kinds = objects.map((object) => object.kind);
    expect(kinds.indexOf("ServiceAccount")).toBeLessThan(kinds.indexOf("Deployment"));
    expect(kinds.indexOf("PodDisruptionBudget")).toBeLessThan(kinds.indexOf("ServiceAccount"));
    const firstHook = objects.findIndex((object) => hookOf(object) !== undefined);
    expect(firstHook).toBeGreaterThan(kinds.lastIndexOf("Deployment"));
    expect(objects.slice(firstHook).every((object) => hookOf(object) !== undefined)).toBe(true);
    expect(objects.every((object) => object.source.startsWith("matoolkit/templates/"))).toBe(true);
  });
});

describe.each(ciFiles)("chart rendered with ci/%s", (valuesFile) => {
  let objects: K8sObject[];
  const values = parse(readFileSync(join(chartDir, "ci", valuesFile), "utf8")) as {
    broker?: { type?: string };
    worker?: { keda?: { minReplicaCount?: number } };
    database?: { url?: string; existingSecret?: { name?: string } };
  } & Record<string, { database?: { user?: string } } | undefined>;
  const broker = values.broker?.type ?? "servicebus";
  beforeAll(() => {
    objects = render(valuesFile);
  });
  const ofKind = (kind: string): K8sObject[] => objects.filter((object) => object.kind === kind);
  const byName = (kind: string, name: string): K8sObject | undefined =>
    ofKind(kind).find((object) => object.metadata.name === name);

  it("passes helm lint --strict (Chart.yaml, every template renders, no warning)", () => {
    const result = run("lint", ["--strict", "-f", join(chartDir, "ci", valuesFile)]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it("validates every object against its schema (Kubernetes, Dapr, KEDA)", () => {
    expect(objects.length).toBeGreaterThan(10);
    const decoded = strictDecode(objects.map((object) => object.text).join("---\n"));
    expect(decoded.map(({ kind, name }) => `${kind}/${name}`)).toEqual(
      objects.map((object) => `${object.kind}/${object.metadata.name}`),
    );
    expect(decoded.filter((entry) => entry.error !== undefined)).toEqual([]);
    // Every built-in kind is one Kubernetes' types know; only the Dapr and KEDA ones are skipped.
    expect(decoded.filter((entry) => entry.skipped).map((entry) => entry.kind)).toEqual(
      objects.filter((object) => crdValidators.has(`${object.apiVersion}/${object.kind}`)).map((o) => o.kind),
    );
    for (const object of objects) {
      try {
        validateObject(object);
      } catch (error) {
        throw new Error(`${object.source} ${object.kind}/${object.metadata.name}: ${String(error)}`);
      }
    }
  });

  it("would refuse a misspelled field in every kind it renders (strict decoding, closed CRD schemas)", () => {
    const kinds = new Map<string, K8sObject>();
    for (const object of objects) kinds.set(`${object.apiVersion}/${object.kind}`, object);
    expect(kinds.size).toBeGreaterThanOrEqual(broker === "servicebus" ? 11 : 9);
    for (const [key, object] of kinds) {
      const {
        source: _source,
        text: _text,
        ...plain
      } = structuredClone(object) as K8sObject & {
        spec?: Record<string, unknown>;
      };
      const misspelled = plain as Record<string, unknown> & { spec?: Record<string, unknown> };
      if (misspelled.spec !== undefined) misspelled.spec = { ...misspelled.spec, scope: ["x"] };
      else misspelled.dataa = {};
      if (crdValidators.has(key)) {
        expect(() => validateObject({ ...object, ...misspelled } as K8sObject), key).toThrow(
          /should NOT have additional properties/,
        );
      } else {
        const [decoded] = strictDecode(stringify(misspelled));
        expect(decoded?.error, key).toMatch(/strict decoding error: unknown field "(spec\.scope|dataa)"/);
      }
    }
  });

  it("runs each service with its Dapr app id and port (dapr/README.md, platform config)", () => {
    const deployments = ofKind("Deployment");
    expect(deployments.map((d) => podOf(d).annotations["dapr.io/app-id"]).sort()).toEqual(
      expect.arrayContaining(["matoolkit-admin-api", "matoolkit-orchestrator", "matoolkit-scheduler"]),
    );
    for (const deployment of deployments) {
      const pod = podOf(deployment);
      const appId = pod.annotations["dapr.io/app-id"]!;
      const service = pod.container.args[0]!;
      const convention = daprApps.find((app) => app.service === service)!;
      expect(convention, `${service} is a Dapr app`).toBeDefined();
      // A pool's app id is the worker's plus -<pool>.
      expect(appId === convention.appId || appId.startsWith(`${convention.appId}-`)).toBe(true);
      expect(readmeAppPorts.get(convention.appId)).toBe(convention.appPort);
      expect(pod.annotations["dapr.io/app-port"]).toBe(String(convention.appPort));
      const sa = byName("ServiceAccount", pod.serviceAccountName);
      const config = service === "worker" ? undefined : platformConfigFromEnv(runtimeEnv(pod, sa));
      if (config) expect(config.dapr?.appPort).toBe(convention.appPort);
      expect(pod.annotations).toMatchObject({
        "dapr.io/enabled": "true",
        "dapr.io/config": "matoolkit-config",
        "dapr.io/enable-app-health-check": "true",
        "dapr.io/app-health-check-path": "/healthz",
      });
      expect(pod.annotations["dapr.io/log-level"]).toMatch(/^(debug|info|warn|error)$/);
    }
  });

  it("authenticates each sidecar and its app both ways with Secrets the chart creates (dapr.io/api-token-secret)", () => {
    const secrets = new Map(
      ofKind("Secret").map((secret) => [
        secret.metadata.name,
        (secret as unknown as { data: Record<string, string> }).data,
      ]),
    );
    for (const deployment of ofKind("Deployment")) {
      const pod = podOf(deployment);
      const secretOf = (variable: string) =>
        pod.container.env.find((entry) => entry.name === variable)?.valueFrom?.secretKeyRef;
      for (const [annotation, variable] of [
        ["dapr.io/api-token-secret", "DAPR_API_TOKEN"],
        ["dapr.io/app-token-secret", "APP_API_TOKEN"],
      ] as const) {
        const name = pod.annotations[annotation];
        expect(name, `${deployment.metadata.name} ${annotation}`).toBeTruthy();
        // The injector gives daprd the Secret's key "token"; the app reads the same one.
        expect(secretOf(variable)).toEqual({ name, key: "token" });
        const token = Buffer.from(secrets.get(name!)?.token ?? "", "base64").toString();
        expect(token, `${name} holds a random token`).toMatch(/^[A-Za-z0-9]{48}$/);
      }
    }
    expect(secrets.get("matoolkit-dapr-api-token")?.token).not.toBe(
      secrets.get("matoolkit-app-api-token")?.token,
    );
  });

  it("gives the admin API and the orchestrator one secrets key (webhook secrets sealed by one, opened by the other)", () => {
    const secret = byName("Secret", "matoolkit-secrets-key") as unknown as {
      data: { key: string };
      metadata: { annotations: Record<string, string> };
    };
    // Secret data is base64 of what the app reads: base64 of 32 bytes (secret-key-source.ts).
    const key = Buffer.from(Buffer.from(secret.data.key, "base64").toString(), "base64");
    expect(key).toHaveLength(32);
    expect(secret.metadata.annotations["helm.sh/resource-policy"]).toBe("keep");
    const keyRefs = ofKind("Deployment").flatMap((deployment) => {
      const variable = podOf(deployment).container.env.find(
        (entry) => entry.name === "MATOOLKIT_SECRETS_KEY",
      );
      return variable === undefined ? [] : [[podOf(deployment).container.args[0], variable.valueFrom]];
    });
    expect(keyRefs.map(([service]) => service).sort()).toEqual(["admin-api", "orchestrator"]);
    for (const [, ref] of keyRefs)
      expect(ref).toEqual({ secretKeyRef: { name: "matoolkit-secrets-key", key: "key" } });
  });

  it("sets only variables the code reads, and everything each service requires", () => {
    for (const workload of [...ofKind("Deployment"), ...ofKind("Job")]) {
      const pod = podOf(workload);
      const unread = pod.container.env
        .map((variable) => variable.name)
        .filter((name) => !codeText.includes(name));
      expect(unread, `${workload.metadata.name}: variables no code reads`).toEqual([]);
      const names = pod.container.env.map((variable) => variable.name);
      expect(new Set(names).size, `${workload.metadata.name}: no variable twice`).toBe(names.length);
      if (workload.kind === "Job") continue;
      const service = pod.container.args[0]!;
      const env = runtimeEnv(pod, byName("ServiceAccount", pod.serviceAccountName));
      expect(() => parseServiceConfig(service, env)).not.toThrow();
      expect(env.MATOOLKIT_RUNTIME).toMatch(/^(dapr|aca)$/);
      if (service === "worker") {
        expect(env.DATABASE_URL, "the worker has no SQL access in Dapr mode").toBeUndefined();
        expect(env.MATOOLKIT_WORKER_ID).toBeDefined();
      } else {
        expect(env.DATABASE_URL).toBeDefined();
        expect(env.MATOOLKIT_MIGRATE_ON_START).toBe("false");
      }
    }
  });

  it("scopes each component and the resiliency to every app id that runs", () => {
    const appIds = ofKind("Deployment")
      .map((deployment) => podOf(deployment).annotations["dapr.io/app-id"]!)
      .sort();
    const components = ofKind("Component");
    expect(components.map((component) => component.metadata.name).sort()).toEqual([
      "matoolkit-pubsub",
      "matoolkit-state",
    ]);
    for (const scoped of [...components, ...ofKind("Resiliency")]) {
      expect([...(scoped as unknown as { scopes: string[] }).scopes].sort()).toEqual(appIds);
    }
  });

  it("matches the repository's component profile and Dapr resources", () => {
    const profile = { servicebus: "azure", redis: "local", rabbitmq: "rabbitmq", kafka: "kafka" }[broker]!;
    type Component = { spec: { type: string; version: string; metadata: { name: string }[] } };
    for (const [name, file] of [
      ["matoolkit-pubsub", "pubsub.yaml"],
      ["matoolkit-state", "statestore.yaml"],
    ] as const) {
      const rendered = byName("Component", name) as unknown as Component;
      const repoFile =
        name === "matoolkit-state" && values.broker?.type === "rabbitmq" ? "rabbitmq" : profile;
      const repo = parse(readFileSync(join(root, "components", repoFile, file), "utf8")) as Component;
      if (rendered.spec.type !== repo.spec.type) continue; // e.g. redis state with the rabbitmq profile
      expect(rendered.spec.version).toBe(repo.spec.version);
      const renderedNames = rendered.spec.metadata.map((item) => item.name);
      for (const item of repo.spec.metadata) expect(renderedNames).toContain(item.name);
      // No consumerID: Dapr names the Service Bus subscription after the app id (KEDA relies on it).
      expect(renderedNames).not.toContain("consumerID");
    }
    const resiliency = parse(readFileSync(join(root, "dapr", "resources", "resiliency.yaml"), "utf8")) as {
      spec: unknown;
    };
    expect((byName("Resiliency", "matoolkit-resiliency") as unknown as { spec: unknown }).spec).toEqual(
      resiliency.spec,
    );
    const config = parse(readFileSync(join(root, "dapr", "config.yaml"), "utf8")) as {
      spec: { metric: unknown; tracing: { samplingRate: string } };
    };
    const rendered = byName("Configuration", "matoolkit-config") as unknown as typeof config;
    expect(rendered.spec.metric).toEqual(config.spec.metric);
  });

  it("scales each worker pool with KEDA on its own Service Bus subscription (servicebus only)", () => {
    const scaled = ofKind("ScaledObject") as unknown as z.infer<typeof scaledObjectSchema>[];
    const workers = ofKind("Deployment").filter((d) => podOf(d).container.args[0] === "worker");
    if (broker !== "servicebus") {
      expect(scaled).toEqual([]);
      return;
    }
    expect(scaled).toHaveLength(workers.length);
    const azurePubsub = readFileSync(join(root, "components", "azure", "pubsub.yaml"), "utf8");
    expect(azurePubsub).not.toMatch(/name: consumerID/);
    for (const object of scaled) {
      const target = byName("Deployment", object.spec.scaleTargetRef.name)!;
      expect(target, "the ScaledObject targets a Deployment of the chart").toBeDefined();
      expect((target as unknown as { spec: { replicas?: number } }).spec.replicas).toBeUndefined();
      const trigger = object.spec.triggers[0]!;
      expect(trigger.metadata.topicName).toBe(topics.workerJobs);
      expect(trigger.metadata.subscriptionName).toBe(podOf(target).annotations["dapr.io/app-id"]);
      // KEDA creates no subscription and scales a new Deployment straight to minReplicaCount
      // (keda.sh/docs/latest/scalers/azure-service-bus, concepts/scaling-deployments): zero only
      // when infrastructure created the subscriptions (Dapr's entity management off).
      const pubsubMetadata = (
        byName("Component", "matoolkit-pubsub") as unknown as {
          spec: { metadata: { name: string; value?: string }[] };
        }
      ).spec.metadata;
      const entityManagementOff =
        pubsubMetadata.find((item) => item.name === "disableEntityManagement")?.value === "true";
      expect(object.spec.minReplicaCount).toBe(
        entityManagementOff && values.worker?.keda?.minReplicaCount === 0 ? 0 : 1,
      );
      expect(byName("TriggerAuthentication", trigger.authenticationRef.name)).toBeDefined();
      const pubsub = byName("Component", "matoolkit-pubsub") as unknown as {
        spec: { metadata: { name: string; value?: string }[] };
      };
      const namespaceName = pubsub.spec.metadata.find((item) => item.name === "namespaceName")?.value;
      expect(namespaceName).toBe(`${trigger.metadata.namespace}.servicebus.windows.net`);
    }
  });

  it("runs the contract's image commands, non-root and read-only, probed on /healthz and /readyz", () => {
    for (const deployment of ofKind("Deployment")) {
      const pod = podOf(deployment);
      const [command] = pod.container.args;
      expect(pod.container.args).toHaveLength(1);
      expect(imageCommands).toContain(command);
      const port = command === "admin-api" ? 8080 : Number(pod.annotations["dapr.io/app-port"]);
      expect(pod.container.livenessProbe.httpGet).toEqual({ path: "/healthz", port });
      expect(pod.container.readinessProbe.httpGet).toEqual({ path: "/readyz", port });
      expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod.container.securityContext.readOnlyRootFilesystem).toBe(true);
      for (const mountPath of ["/data", "/tmp"]) {
        const mount = pod.container.volumeMounts.find((m) => m.mountPath === mountPath);
        expect(pod.spec.volumes.find((v) => v.name === mount?.name)?.emptyDir).toBeDefined();
      }
      expect(pod.container.env).toContainEqual({ name: "MATOOLKIT_DATA_DIR", value: "/data" });
      const replicas = (deployment as unknown as { spec: { replicas?: number; strategy?: { type: string } } })
        .spec;
      if (command === "orchestrator" || command === "scheduler") {
        expect(replicas.replicas).toBe(1);
        expect(replicas.strategy?.type).toBe("Recreate");
      }
      expect(byName("PodDisruptionBudget", deployment.metadata.name)).toBeDefined();
      const sa = byName("ServiceAccount", pod.serviceAccountName);
      expect(sa, "the pod's ServiceAccount is rendered").toBeDefined();
      if (pod.labels["azure.workload.identity/use"] === "true") {
        expect(sa!.metadata.labels?.["azure.workload.identity/use"]).toBe("true");
        expect(sa!.metadata.annotations?.["azure.workload.identity/client-id"]).toMatch(/^[0-9a-f-]{36}$/);
      }
    }
  });

  it("creates the Dapr components, Configuration and Resiliency, then migrates, before any Deployment (pre-install/pre-upgrade hooks)", () => {
    const sidecarResources = objects.filter((object) => daprSidecarKinds.includes(object.kind));
    expect(sidecarResources.map((object) => object.kind).sort()).toEqual([
      "Component",
      "Component",
      "Configuration",
      "Resiliency",
    ]);
    const job = byName("Job", "matoolkit-migrate")!;
    const jobAccount = byName("ServiceAccount", podOf(job).serviceAccountName)!;
    for (const event of ["pre-install", "pre-upgrade"]) {
      const sequence = hookSequence(objects, event);
      // The migrate ServiceAccount, the four Dapr resources, then the Job Helm waits for.
      expect(sequence.map((object) => `${object.kind}/${object.metadata.name}`)).toEqual(
        [jobAccount, ...sequence.filter((object) => daprSidecarKinds.includes(object.kind)), job].map(
          (object) => `${object.kind}/${object.metadata.name}`,
        ),
      );
      expect(sequence.filter((object) => daprSidecarKinds.includes(object.kind))).toHaveLength(4);
    }
    for (const resource of sidecarResources) {
      // Replaced on each upgrade (a hook is created, not patched), and never deleted after it ran:
      // the sidecars need it for as long as the release runs.
      expect(hookOf(resource)?.deletePolicies, `${resource.kind}/${resource.metadata.name}`).toEqual([
        "before-hook-creation",
      ]);
    }
    // Everything that starts a pod, or acts on one, is an ordinary resource: created after the hooks.
    for (const kind of [
      "Deployment",
      "ScaledObject",
      "TriggerAuthentication",
      "Secret",
      "PodDisruptionBudget",
    ])
      for (const object of ofKind(kind))
        expect(hookOf(object), `${kind}/${object.metadata.name}`).toBeUndefined();
  });

  it("names the KEDA identity's role as Azure Service Bus Data Owner (Manage rights), not Data Receiver", () => {
    const triggerAuthentications = ofKind("TriggerAuthentication");
    if (broker !== "servicebus") {
      expect(triggerAuthentications).toEqual([]);
      return;
    }
    /** The words of a YAML comment block, whatever its line breaks. */
    const prose = (text: string) => text.replace(/\n\s*#\s*/g, " ").replace(/\s+/g, " ");
    // keda.sh/docs/latest/scalers/azure-service-bus: reading the message count takes Manage.
    for (const auth of triggerAuthentications) {
      expect(prose(auth.text)).toContain("Azure Service Bus Data Owner");
      expect(prose(auth.text)).not.toContain("Receiver");
    }
    const valuesText = readFileSync(join(chartDir, "values.yaml"), "utf8");
    const kedaComment = prose(
      valuesText.slice(valuesText.indexOf("# KEDA ScaledObject"), valuesText.indexOf("  keda:")),
    );
    expect(kedaComment).toContain("Azure Service Bus Data Owner");
    expect(kedaComment).not.toContain("Receiver");
  });

  it("migrates once per deploy in a pre-install/pre-upgrade hook Job with its own hook ServiceAccount", () => {
    const job = byName("Job", "matoolkit-migrate")!;
    expect(job.metadata.annotations?.["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    const pod = podOf(job);
    expect(pod.container.args).toEqual(["migrate"]);
    expect(pod.annotations["dapr.io/enabled"]).toBe("false");
    const sa = byName("ServiceAccount", pod.serviceAccountName)!;
    expect(sa.metadata.annotations?.["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(Number(sa.metadata.annotations?.["helm.sh/hook-weight"])).toBeLessThan(
      Number(job.metadata.annotations?.["helm.sh/hook-weight"]),
    );
    const env = Object.fromEntries(pod.container.env.map((v) => [v.name, v.value ?? "secret"]));
    expect(env.DATABASE_URL).toBeDefined();
    if (env.DATABASE_AUTH === "entra") expect(env.DATABASE_AUTH_CLIENT_ID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("logs each SQL process in to PostgreSQL as the role of the identity whose token it presents (Entra)", () => {
    // Azure Database for PostgreSQL takes an Entra token only at the login of its own identity's
    // role (learn.microsoft.com/azure/postgresql/flexible-server/how-to-configure-sign-in-azure-ad-authentication;
    // deploy/aca/hooks/db-roles.sh makes one role per identity): identities and roles pair one to one.
    const logins = sqlLogins(objects);
    expect(logins.map((login) => login.service).sort()).toEqual(Object.keys(sqlValuesKeys).sort());
    const roleOfIdentity = new Map<string, string>();
    const identityOfRole = new Map<string, string>();
    for (const login of logins) {
      if (login.auth !== "entra") {
        // Password authentication: every process reads the one shared URL (the Secret's).
        expect(login.url.valueFrom?.secretKeyRef?.name, login.service).toBe(
          values.database?.existingSecret?.name,
        );
        continue;
      }
      const role = roleOf(login.url.value!)!;
      const own = values[sqlValuesKeys[login.service]!]?.database?.user;
      expect(role, login.service).toBe(own ?? roleOf(values.database!.url!));
      expect(login.url.value!.replace(/\/\/[^@]*@/, "//"), "only the role differs").toBe(
        values.database!.url!.replace(/\/\/[^@]*@/, "//"),
      );
      expect(roleOfIdentity.get(login.clientId!) ?? role, `${login.service}: its identity's role`).toBe(role);
      expect(identityOfRole.get(role) ?? login.clientId, `${login.service}: ${role} is one identity's`).toBe(
        login.clientId,
      );
      roleOfIdentity.set(login.clientId!, role);
      identityOfRole.set(role, login.clientId!);
    }
  });
});

describe("default values", () => {
  it("default to Service Bus, Entra for PostgreSQL and Workload ID (ci/minimal-values.yaml sets only what is required)", () => {
    const objects = render("minimal-values.yaml");
    const pubsub = objects.find((o) => o.metadata.name === "matoolkit-pubsub") as unknown as {
      spec: { type: string };
    };
    expect(pubsub.spec.type).toBe("pubsub.azure.servicebus.topics");
    const orchestrator = objects.find(
      (o) => o.kind === "Deployment" && o.metadata.name === "matoolkit-orchestrator",
    )!;
    expect(podOf(orchestrator).container.env).toContainEqual({ name: "DATABASE_AUTH", value: "entra" });
    expect(podOf(orchestrator).labels["azure.workload.identity/use"]).toBe("true");
    const minimal = parseAllDocuments(readFileSync(join(chartDir, "ci", "minimal-values.yaml"), "utf8"));
    expect(minimal).toHaveLength(1);
  });

  it("keeps one worker replica by default, and scales a pool to zero only on subscriptions created beforehand", () => {
    const minimum = (objects: K8sObject[]) =>
      Object.fromEntries(
        objects
          .filter((object) => object.kind === "ScaledObject")
          .map((object) => [
            object.metadata.name,
            (object as unknown as { spec: { minReplicaCount: number } }).spec.minReplicaCount,
          ]),
      );
    expect(minimum(render("minimal-values.yaml"))).toEqual({ "matoolkit-worker": 1 });
    const dir = mkdtempSync(join(tmpdir(), "matoolkit-helm-"));
    try {
      const file = join(dir, "pool.yaml");
      // A pool's own 0 counts although mergeOverwrite skips zero values.
      writeFileSync(
        file,
        'broker:\n  servicebus:\n    disableEntityManagement: "true"\nworkerPools:\n  - name: "02"\n    workerId: worker-02\n    keda: { minReplicaCount: 0 }\n',
      );
      expect(minimum(render("minimal-values.yaml", ["-f", file]))).toEqual({
        "matoolkit-worker": 1,
        "matoolkit-worker-02": 0,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("restarts the pods when the Dapr resources their sidecars loaded change, and only then", () => {
    const checksums = (extra: string[]) =>
      Object.fromEntries(
        render("minimal-values.yaml", extra)
          .filter((object) => object.kind === "Deployment")
          .map((object) => [object.metadata.name, podOf(object).annotations["checksum/dapr-resources"]]),
      );
    const base = checksums([]);
    expect(Object.values(base).every((checksum) => /^[0-9a-f]{64}$/.test(checksum ?? ""))).toBe(true);
    expect(checksums(["--set", "adminApi.replicas=3"])).toEqual(base);
    for (const change of [
      "broker.servicebus.disableEntityManagement=true",
      "dapr.config.zipkinEndpoint=http://zipkin:9411/api/v2/spans",
    ]) {
      const changed = checksums(["--set", change]);
      for (const [name, checksum] of Object.entries(changed))
        expect(checksum, `${change}: ${name}`).not.toBe(base[name]);
    }
  });

  it("uses the operator's own token Secrets when named, and creates none then", () => {
    const objects = render("minimal-values.yaml", [
      "--set",
      "dapr.apiTokens.daprApiTokenSecret=kv-dapr-token",
      "--set",
      "dapr.apiTokens.appApiTokenSecret=kv-app-token",
    ]);
    expect(objects.filter((o) => o.kind === "Secret").map((o) => o.metadata.name)).toEqual([
      "matoolkit-secrets-key",
    ]);
    for (const deployment of objects.filter((o) => o.kind === "Deployment")) {
      const pod = podOf(deployment);
      expect(pod.annotations["dapr.io/api-token-secret"]).toBe("kv-dapr-token");
      expect(pod.annotations["dapr.io/app-token-secret"]).toBe("kv-app-token");
      expect(pod.container.env).toContainEqual({
        name: "APP_API_TOKEN",
        valueFrom: { secretKeyRef: { name: "kv-app-token", key: "token" } },
      });
    }
  });
});

describe("PostgreSQL role per identity (database.auth entra)", () => {
  const minimal = ["-f", join(chartDir, "ci", "minimal-values.yaml")];
  const servicebus = ["-f", join(chartDir, "ci", "servicebus-values.yaml")];
  const sharedUrl =
    "postgres://id-matoolkit@psql-matoolkit.postgres.database.azure.com:5432/matoolkit?sslmode=require";
  const loginsBy = (objects: K8sObject[]) =>
    Object.fromEntries(
      sqlLogins(objects).map((login) => [
        login.service,
        { role: login.url.value === undefined ? undefined : roleOf(login.url.value), ...login },
      ]),
    );

  it("puts each service's own role in its DATABASE_URL when each service has its own identity (ci/servicebus-values.yaml)", () => {
    const logins = loginsBy(render("servicebus-values.yaml"));
    expect(
      Object.fromEntries(
        Object.entries(logins).map(([service, login]) => [service, [login.clientId, login.url.value]]),
      ),
    ).toEqual({
      "admin-api": [
        "00000000-0000-0000-0000-0000000000a2",
        "postgres://id-matoolkit-admin-api@psql-matoolkit.postgres.database.azure.com:5432/matoolkit?sslmode=require",
      ],
      orchestrator: [
        "00000000-0000-0000-0000-0000000000a3",
        "postgres://id-matoolkit-orchestrator@psql-matoolkit.postgres.database.azure.com:5432/matoolkit?sslmode=require",
      ],
      scheduler: [
        "00000000-0000-0000-0000-0000000000a4",
        "postgres://id-matoolkit-scheduler@psql-matoolkit.postgres.database.azure.com:5432/matoolkit?sslmode=require",
      ],
      // The migrate job keeps workloadIdentity.clientId, whose role database.url names.
      migrate: ["00000000-0000-0000-0000-0000000000a1", sharedUrl],
    });
  });

  it("renders one shared identity as before: every process with database.url as given", () => {
    for (const extra of [
      [],
      // A service's clientId equal to the shared one is the same identity.
      ["--set", "orchestrator.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a1"],
      // database.clientId is every SQL process's database identity, whatever its ServiceAccount.
      [
        "--set",
        "database.clientId=00000000-0000-0000-0000-0000000000d1",
        "--set",
        "orchestrator.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a3",
      ],
    ]) {
      const logins = Object.values(loginsBy(render("minimal-values.yaml", extra)));
      expect(logins, extra.join(" ")).toHaveLength(4);
      const clientId = extra.some((item) => item.startsWith("database.clientId"))
        ? "00000000-0000-0000-0000-0000000000d1"
        : "00000000-0000-0000-0000-0000000000a1";
      for (const login of logins) {
        expect(login.url, `${login.service} ${extra.join(" ")}`).toEqual({
          name: "DATABASE_URL",
          value: sharedUrl,
        });
        expect(login.clientId, login.service).toBe(clientId);
      }
    }
  });

  it.each([
    [
      "the orchestrator",
      [...servicebus, "--set", "orchestrator.database.user="],
      "orchestrator.serviceAccount.clientId gives the orchestrator its own identity: set orchestrator.database.user to that identity's PostgreSQL role (database.url's role 'id-matoolkit' belongs to another identity, the one of workloadIdentity.clientId;",
    ],
    [
      "the admin API",
      [...servicebus, "--set", "adminApi.database.user="],
      "adminApi.serviceAccount.clientId gives the admin API its own identity: set adminApi.database.user to that identity's PostgreSQL role",
    ],
    [
      "the migrate job",
      [...minimal, "--set", "migrations.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a9"],
      "migrations.serviceAccount.clientId gives the migrate job its own identity: set migrations.database.user to that identity's PostgreSQL role (database.url's role 'id-matoolkit'",
    ],
    [
      "a URL without a role",
      [
        ...minimal,
        "--set",
        "database.url=postgres://psql-matoolkit.postgres.database.azure.com/matoolkit",
        "--set",
        "scheduler.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a4",
      ],
      "set scheduler.database.user to that identity's PostgreSQL role (database.url names no role;",
    ],
  ])("refuses an own identity without its own role: %s", (_case, args, message) => {
    const result = run("template", args);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
  });

  it("never prints database.url's password in its messages", () => {
    const password = "pw-Z9xq-never-printed";
    for (const [extra, message] of [
      [
        [
          "--set",
          `database.url=postgres://id-matoolkit:${password}@psql-matoolkit.postgres.database.azure.com/matoolkit`,
          "--set",
          "orchestrator.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a3",
        ],
        "database.url's role 'id-matoolkit' belongs to another identity",
      ],
      [
        [
          "--set",
          `database.url=mysql://id-matoolkit:${password}@db/matoolkit`,
          "--set",
          "orchestrator.database.user=x",
        ],
        "database.url must be a postgres:// or postgresql:// URL for orchestrator.database.user to replace its user name",
      ],
      [
        [
          "--set",
          `database.url=postgres://id-matoolkit:${password}@db/matoolkit`,
          "--set",
          "database.auth=password",
          "--set",
          "orchestrator.database.user=x",
        ],
        "orchestrator.database.user applies with database.auth entra only",
      ],
    ] as const) {
      const result = run("template", [...minimal, ...extra]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(message);
      expect(`${result.stdout}${result.stderr}`).not.toContain(password);
    }
  });

  it("percent-encodes a role name so that pg logs in with it unchanged", () => {
    const role = "Matoolkit Orchestrator+ops@contoso.com";
    const logins = loginsBy(
      render("minimal-values.yaml", [
        "--set",
        "orchestrator.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a3",
        "--set-string",
        `orchestrator.database.user=${role}`,
      ]),
    );
    expect(logins.orchestrator!.role).toBe(role);
    expect(logins.orchestrator!.url.value).toBe(
      "postgres://Matoolkit%20Orchestrator%2Bops%40contoso.com@psql-matoolkit.postgres.database.azure.com:5432/matoolkit?sslmode=require",
    );
    expect(logins.scheduler!.role).toBe("id-matoolkit");
  });

  it("reads database.existingSecret for the shared identity only: the chart cannot rewrite a Secret's URL", () => {
    const secret = ["--set", "database.existingSecret.name=matoolkit-database"];
    for (const login of Object.values(loginsBy(render("minimal-values.yaml", secret))))
      expect(login.url.valueFrom, login.service).toEqual({
        secretKeyRef: { name: "matoolkit-database", key: "DATABASE_URL" },
      });
    const ownIdentity = run("template", [
      ...minimal,
      ...secret,
      "--set",
      "orchestrator.serviceAccount.clientId=00000000-0000-0000-0000-0000000000a3",
    ]);
    expect(ownIdentity.status).toBe(1);
    expect(ownIdentity.stderr).toContain(
      "orchestrator.serviceAccount.clientId gives the orchestrator its own identity, whose PostgreSQL role the shared URL of database.existingSecret cannot name: with database.auth entra set database.url (it holds no password) instead of database.existingSecret.name, and orchestrator.database.user to that identity's role",
    );
    const ownUser = run("template", [
      ...minimal,
      ...secret,
      "--set",
      "scheduler.database.user=id-matoolkit-scheduler",
    ]);
    expect(ownUser.status).toBe(1);
    expect(ownUser.stderr).toContain(
      "scheduler.database.user cannot be applied to database.existingSecret: the chart does not rewrite a Secret's URL",
    );
  });
});
