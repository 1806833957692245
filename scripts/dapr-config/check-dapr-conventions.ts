/**
 * Checks across files that each file's schema cannot see: every profile defines both
 * components, dapr.yaml and docker-compose.yml run the apps of the conventions table with their
 * ports and commands, the declarative subscriptions are the twins of the programmatic ones, and
 * the resiliency policies fit the components and the app's own delivery bound.
 */
import { isDeepStrictEqual } from "node:util";
import { posix } from "node:path";
import {
  componentSchema,
  composeSchema,
  configurationSchema,
  mountTargets,
  multiAppRunSchema,
  resiliencySchema,
  subscriptionSchema,
  type ComposeFile,
  type DaprComponent,
  type MultiAppRun,
} from "./dapr-config-schemas.ts";
import {
  appDeliveryAttempts,
  componentProfiles,
  composeComponentsFolder,
  composeDaprConfigFile,
  daprApps,
  daprComponentNames,
  daprConfigFile,
  daprSubscriptions,
  declarativeSubscriptionsFolder,
  refusedProfiles,
  sharedResourcesFolder,
} from "./dapr-conventions.ts";
import { checkJetStreamConsumers } from "./check-jetstream-consumers.ts";
import { commandArguments, flagValue, isDaprdCommand, parseDaprdFlags } from "./daprd-command.ts";
import type { DaprDocument } from "./load-dapr-files.ts";
import { formatYamlPath, type Problem } from "./validate-dapr-files.ts";

export interface ConventionContext {
  /** Whether a repository-relative path (file or folder) exists. */
  pathExists(path: string): boolean;
}

/** Where the multi-app run template and the Dapr Compose file live. */
export const runTemplateFile = "dapr.yaml";
export const daprComposeFile = "docker-compose.yml";

type Report = (document: DaprDocument | string, path: readonly PropertyKey[], message: string) => void;

export function checkDaprConventions(
  documents: readonly DaprDocument[],
  context: ConventionContext,
): Problem[] {
  const problems: Problem[] = [];
  const report: Report = (document, path, message) => {
    problems.push(
      typeof document === "string"
        ? { file: document, path: formatYamlPath(path), message }
        : { file: document.file, line: document.lineOf(path), path: formatYamlPath(path), message },
    );
  };
  checkComponentProfiles(documents, report);
  checkRefusedProfiles(documents, context, report);
  checkRunTemplate(documents, context, report);
  checkCompose(documents, context, report);
  checkDeclarativeSubscriptions(documents, report);
  checkResiliency(documents, report);
  checkComposeConfiguration(documents, report);
  problems.push(...checkJetStreamConsumers(documents));
  return problems;
}

/** Normalises `./components/local/` to `components/local`. */
export function repoPath(path: string, base = "."): string {
  return posix.normalize(posix.join(base, path)).replace(/\/$/, "");
}

const isInside = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`);

function parsedDocuments<T>(
  documents: readonly DaprDocument[],
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  where: (file: string) => boolean,
): { document: DaprDocument; data: T }[] {
  return documents.flatMap((document) => {
    if (!where(document.file)) return [];
    const parsed = schema.safeParse(document.value);
    return parsed.success ? [{ document, data: parsed.data }] : [];
  });
}

// ---------------------------------------------------------------------------------------------

function checkComponentProfiles(documents: readonly DaprDocument[], report: Report): void {
  const folders = [...componentProfiles.map((profile) => `components/${profile}`), composeComponentsFolder];
  for (const folder of folders) {
    const components = parsedDocuments<DaprComponent>(documents, componentSchema, (file) =>
      isInside(file, folder),
    );
    const byName = (name: string) => components.filter(({ data }) => data.metadata.name === name);
    const expectations = [
      { name: daprComponentNames.pubsub, block: "pubsub." },
      { name: daprComponentNames.stateStore, block: "state." },
    ];
    for (const { name, block } of expectations) {
      const found = byName(name);
      if (found.length !== 1) {
        report(folder, [], `must define the component ${name} exactly once (found ${found.length})`);
        continue;
      }
      const [{ document, data }] = found as [(typeof found)[number]];
      if (!data.spec.type.startsWith(block)) {
        report(document, ["spec", "type"], `${name} must be a ${block}* component, not ${data.spec.type}`);
      }
    }
    const actorStores = components.filter(({ data }) =>
      data.spec.metadata.some((item) => item.name === "actorStateStore" && item.value === "true"),
    );
    if (actorStores.length !== 1) {
      report(
        folder,
        [],
        `must have exactly one state store with actorStateStore "true" (found ${actorStores.length})`,
      );
    } else if (actorStores[0]?.data.metadata.name !== daprComponentNames.stateStore) {
      report(folder, [], `the actor state store must be ${daprComponentNames.stateStore} (workflow state)`);
    }
  }
}

/** A refused profile ships its reason (REFUSED.md) and no file daprd could load. */
function checkRefusedProfiles(
  documents: readonly DaprDocument[],
  context: ConventionContext,
  report: Report,
): void {
  for (const [profile, reason] of Object.entries(refusedProfiles)) {
    const folder = `components/${profile}`;
    if (!context.pathExists(`${folder}/REFUSED.md`)) {
      report(folder, [], `is a refused profile and needs ${folder}/REFUSED.md saying why (${reason})`);
    }
    const files = new Set(documents.filter(({ file }) => isInside(file, folder)).map(({ file }) => file));
    for (const file of files) report(file, [], `${folder} is refused, ship no Dapr file there: ${reason}`);
  }
}

// ---------------------------------------------------------------------------------------------

const loopbackAddresses = new Set(["127.0.0.1", "[::1]", "::1", "localhost"]);

function checkRunTemplate(
  documents: readonly DaprDocument[],
  context: ConventionContext,
  report: Report,
): void {
  const [template] = parsedDocuments<MultiAppRun>(
    documents,
    multiAppRunSchema,
    (file) => file === runTemplateFile,
  );
  if (!template) {
    report(runTemplateFile, [], "a valid multi-app run template is missing");
    return;
  }
  const { document, data } = template;
  const appIds = data.apps.map((app) => app.appID);
  for (const convention of daprApps) {
    if (!appIds.includes(convention.appId)) report(document, ["apps"], `app ${convention.appId} is missing`);
  }
  data.apps.forEach((app, index) => {
    const at = (...path: PropertyKey[]): PropertyKey[] => ["apps", index, ...path];
    const fixed = daprApps.find((candidate) => candidate.appId === app.appID);
    const convention = fixed ?? extraWorkerPool(app);
    if (!convention) {
      report(
        document,
        at("appID"),
        `app ${app.appID} is not in the conventions table (extra worker pools are named ${workerPoolAppIdPattern.source})`,
      );
      return;
    }
    if (fixed === undefined) {
      checkExtraWorkerPool(app, data.apps, (path, message) => report(document, at(...path), message));
    }
    const expected = {
      appPort: convention.appPort,
      daprHTTPPort: convention.daprHttpPort,
      daprGRPCPort: convention.daprGrpcPort,
    } as const;
    for (const [field, value] of Object.entries(expected)) {
      if (app[field as keyof typeof expected] !== value) {
        report(document, at(field), `${app.appID} ${field} must be ${value}`);
      }
    }
    if (!isDeepStrictEqual(app.command, convention.command)) {
      report(document, at("command"), `${app.appID} command must be ${convention.command.join(" ")}`);
    }
    if (!context.pathExists(repoPath(app.appDirPath))) {
      report(document, at("appDirPath"), `${app.appDirPath} does not exist`);
    }

    const env = { ...data.common?.env, ...app.env };
    const expectedEnv = {
      MATOOLKIT_RUNTIME: "dapr",
      MATOOLKIT_DAPR_APP_PORT: String(convention.appPort),
      ...convention.env,
    };
    for (const [name, value] of Object.entries(expectedEnv)) {
      if (env[name] !== value) report(document, at("env"), `${app.appID} needs env ${name}=${value}`);
    }
    if (!env.DATABASE_URL) report(document, at("env"), `${app.appID} needs env DATABASE_URL (Dapr mode)`);

    // The app's own settings win over `common` (dapr/cli); app paths are relative to appDirPath.
    const resources = app.resourcesPaths
      ? app.resourcesPaths.map((path) => repoPath(path, app.appDirPath))
      : (data.common?.resourcesPaths ?? []).map((path) => repoPath(path));
    const resourcesAt = app.resourcesPaths ? at("resourcesPaths") : ["common", "resourcesPaths"];
    for (const required of ["components/local", sharedResourcesFolder]) {
      if (!resources.includes(required)) report(document, resourcesAt, `${app.appID} must load ${required}`);
    }
    for (const path of resources) {
      if (isInside(path, declarativeSubscriptionsFolder)) {
        report(
          document,
          resourcesAt,
          `${path}: the apps subscribe programmatically; loading ${declarativeSubscriptionsFolder} too subscribes twice`,
        );
      }
      if (!context.pathExists(path)) report(document, resourcesAt, `${path} does not exist`);
    }
    // daprd serves its API on every interface unless told otherwise (pkg/runtime/config.go).
    const listen = app.apiListenAddresses ?? data.common?.apiListenAddresses;
    if (
      listen === undefined ||
      !listen.split(",").every((address) => loopbackAddresses.has(address.trim()))
    ) {
      report(
        document,
        app.apiListenAddresses === undefined ? ["common"] : at("apiListenAddresses"),
        `${app.appID} must serve the Dapr API on loopback only (apiListenAddresses: "127.0.0.1")`,
      );
    }
    const config = app.configFilePath
      ? repoPath(app.configFilePath, app.appDirPath)
      : data.common?.configFilePath && repoPath(data.common.configFilePath);
    if (config !== daprConfigFile) {
      report(
        document,
        app.configFilePath ? at("configFilePath") : ["common"],
        `${app.appID} must use ${daprConfigFile}`,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------

function environmentOf(service: ComposeFile["services"][string]): Record<string, string> {
  const environment = service.environment;
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry) => {
        const equals = entry.indexOf("=");
        return equals < 0 ? [entry, ""] : [entry.slice(0, equals), entry.slice(equals + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(environment ?? {}).map(([name, value]) => [name, String(value ?? "")]),
  );
}

/** Host folder/file mounted at `target` (short syntax `./src:target[:mode]` only). */
function mountSource(
  volumes: ComposeFile["services"][string]["volumes"],
  target: string,
): string | undefined {
  for (const volume of volumes ?? []) {
    if (typeof volume === "string") {
      const [source, mountedAt] = volume.split(":");
      if (mountedAt === target && source !== undefined) return source;
    } else if (volume.target === target) {
      return volume.source;
    }
  }
  return undefined;
}

function checkCompose(documents: readonly DaprDocument[], context: ConventionContext, report: Report): void {
  const [compose] = parsedDocuments<ComposeFile>(
    documents,
    composeSchema,
    (file) => file === daprComposeFile,
  );
  if (!compose) {
    report(daprComposeFile, [], "a valid Docker Compose file is missing");
    return;
  }
  const { document, data } = compose;
  const sidecars = Object.entries(data.services).flatMap(([name, service]) => {
    const argv = commandArguments(service.command);
    return argv && isDaprdCommand(argv) ? [{ name, service, flags: parseDaprdFlags(argv) }] : [];
  });

  for (const convention of daprApps) {
    const sidecar = sidecars.find(({ flags }) => flagValue(flags, "app-id") === convention.appId);
    if (!sidecar) {
      report(document, ["services"], `no daprd sidecar runs --app-id ${convention.appId}`);
      continue;
    }
    const sidecarAt = (...path: PropertyKey[]): PropertyKey[] => ["services", sidecar.name, ...path];
    const expectedFlags = {
      "app-port": convention.appPort,
      "dapr-http-port": convention.daprHttpPort,
      "dapr-grpc-port": convention.daprGrpcPort,
      // daprd serves its API on every interface by default; the app reaches it on loopback.
      "dapr-listen-addresses": "127.0.0.1",
    };
    for (const [flag, value] of Object.entries(expectedFlags)) {
      if (flagValue(sidecar.flags, flag) !== String(value)) {
        report(document, sidecarAt("command"), `${sidecar.name} must run --${flag} ${value}`);
      }
    }

    const appName = /^service:(.+)$/.exec(sidecar.service.network_mode ?? "")?.[1];
    const app = appName === undefined ? undefined : data.services[appName];
    if (appName !== convention.service || !app) {
      report(
        document,
        sidecarAt("network_mode"),
        `${sidecar.name} must share the network of service ${convention.service}`,
      );
      continue;
    }
    const appAt = (...path: PropertyKey[]): PropertyKey[] => ["services", appName, ...path];
    if (!isDeepStrictEqual(commandArguments(app.command), [...convention.imageCommand])) {
      report(document, appAt("command"), `${appName} command must be ${convention.imageCommand.join(" ")}`);
    }
    const env = environmentOf(app);
    const expectedEnv = {
      MATOOLKIT_RUNTIME: "dapr",
      MATOOLKIT_DAPR_APP_PORT: String(convention.appPort),
      MATOOLKIT_DAPR_APP_HOST: "127.0.0.1",
      DAPR_HTTP_PORT: String(convention.daprHttpPort),
      DAPR_GRPC_PORT: String(convention.daprGrpcPort),
      ...convention.env,
    };
    for (const [name, value] of Object.entries(expectedEnv)) {
      if (env[name] !== value) report(document, appAt("environment"), `${appName} needs ${name}=${value}`);
    }
    // Token authentication both ways: the pair must hold the same non-empty tokens.
    const sidecarEnv = environmentOf(sidecar.service);
    for (const name of ["DAPR_API_TOKEN", "APP_API_TOKEN"]) {
      if (!env[name] || env[name] !== sidecarEnv[name]) {
        report(document, sidecarAt("environment"), `${sidecar.name} and ${appName} need the same ${name}`);
      }
    }
    // The deployment contract: on Dapr the worker has no SQL access, so no DATABASE_URL either.
    if (convention.usesSql && !env.DATABASE_URL)
      report(document, appAt("environment"), `${appName} needs DATABASE_URL (Dapr mode)`);
    if (!convention.usesSql && env.DATABASE_URL)
      report(document, appAt("environment"), `${appName} must not have DATABASE_URL (no SQL on Dapr)`);

    // What the sidecar loads, traced back to the repository folders mounted there.
    const volumes = sidecar.service.volumes;
    const resourceSources = (sidecar.flags.get("resources-path") ?? []).map((target) =>
      mountSource(volumes, target),
    );
    const loaded = resourceSources.flatMap((source) => (source === undefined ? [] : [repoPath(source)]));
    for (const required of [composeComponentsFolder, sharedResourcesFolder]) {
      if (!loaded.includes(required))
        report(document, sidecarAt("volumes"), `${sidecar.name} must load ${required}`);
    }
    for (const source of loaded) {
      if (isInside(source, declarativeSubscriptionsFolder)) {
        report(
          document,
          sidecarAt("volumes"),
          `${sidecar.name} loads ${source}, but the apps subscribe programmatically`,
        );
      }
    }
    const configTarget = flagValue(sidecar.flags, "config");
    const configSource = configTarget === undefined ? undefined : mountSource(volumes, configTarget);
    if (configSource === undefined || repoPath(configSource) !== composeDaprConfigFile) {
      report(
        document,
        sidecarAt("volumes"),
        `${sidecar.name} must read ${composeDaprConfigFile} as its --config`,
      );
    }
    for (const target of mountTargets(volumes)) {
      const source = mountSource(volumes, target);
      if (source?.startsWith(".") && !context.pathExists(repoPath(source))) {
        report(document, sidecarAt("volumes"), `${source} (mounted at ${target}) does not exist`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

function checkDeclarativeSubscriptions(documents: readonly DaprDocument[], report: Report): void {
  const subscriptions = parsedDocuments(documents, subscriptionSchema, (file) =>
    isInside(file, declarativeSubscriptionsFolder),
  );
  for (const convention of daprSubscriptions) {
    const twins = subscriptions.filter(
      ({ data }) => data.spec.topic === convention.topic && (data.scopes ?? []).includes(convention.appId),
    );
    if (twins.length !== 1) {
      report(
        declarativeSubscriptionsFolder,
        [],
        `needs exactly one Subscription of ${convention.appId} to ${convention.topic} (found ${twins.length})`,
      );
      continue;
    }
    const [{ document, data }] = twins as [(typeof twins)[number]];
    if (!isDeepStrictEqual(data.scopes, [convention.appId])) {
      report(document, ["scopes"], `must be scoped to ${convention.appId} only`);
    }
    if (data.spec.pubsubname !== daprComponentNames.pubsub) {
      report(document, ["spec", "pubsubname"], `must be ${daprComponentNames.pubsub}`);
    }
    const routes = { default: data.spec.routes.default, rules: data.spec.routes.rules ?? [] };
    const expected = { default: convention.routes.default, rules: convention.routes.rules ?? [] };
    if (!isDeepStrictEqual(routes, expected)) {
      report(
        document,
        ["spec", "routes"],
        `must be ${JSON.stringify(convention.routes)} (the programmatic routes)`,
      );
    }
    if (data.spec.deadLetterTopic !== convention.deadLetterTopic) {
      report(document, ["spec", "deadLetterTopic"], `must be ${convention.deadLetterTopic}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------

function checkResiliency(documents: readonly DaprDocument[], report: Report): void {
  const resiliencies = parsedDocuments(documents, resiliencySchema, (file) =>
    isInside(file, sharedResourcesFolder),
  );
  if (resiliencies.length === 0) {
    report(sharedResourcesFolder, [], "needs the Resiliency of the sidecars");
    return;
  }
  const componentNames = new Set<string>(Object.values(daprComponentNames));
  for (const { document, data } of resiliencies) {
    const retries = data.spec.policies.retries ?? {};
    for (const [component, directions] of Object.entries(data.spec.targets.components ?? {})) {
      const at = ["spec", "targets", "components", component];
      if (!componentNames.has(component)) {
        report(
          document,
          at,
          `${component} is not a component of the profiles (${[...componentNames].join(", ")})`,
        );
      }
      for (const direction of ["inbound", "outbound"] as const) {
        const retryName = directions[direction]?.retry;
        if (retryName === undefined) continue;
        const maxRetries = retries[retryName]?.maxRetries ?? -1;
        if (maxRetries < 0) {
          report(
            document,
            [...at, direction, "retry"],
            `retry policy ${retryName} must set a bounded maxRetries`,
          );
        }
        if (
          component === daprComponentNames.pubsub &&
          direction === "inbound" &&
          maxRetries < appDeliveryAttempts - 1
        ) {
          report(
            document,
            [...at, direction, "retry"],
            `${retryName} allows ${maxRetries + 1} attempts, fewer than the app's ${appDeliveryAttempts}: with a deadLetterTopic Dapr would dead-letter messages before the app does`,
          );
        }
      }
    }
  }
}

/**
 * dapr/config.compose.yaml must be dapr/config.yaml with only the exporter host changed, and
 * without the self-hosted name resolution (a SQLite file the apps of `dapr run` share; Compose's
 * containers keep Dapr's default, mDNS, on their own network).
 */
function checkComposeConfiguration(documents: readonly DaprDocument[], report: Report): void {
  const configuration = (file: string) =>
    parsedDocuments(documents, configurationSchema, (path) => path === file)[0];
  const local = configuration(daprConfigFile);
  const compose = configuration(composeDaprConfigFile);
  if (!local) report(daprConfigFile, [], "a valid Dapr Configuration is missing");
  if (!compose) report(composeDaprConfigFile, [], "a valid Dapr Configuration is missing");
  if (!local || !compose) return;
  const withoutEndpoints = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value), (key, field: unknown) =>
      key === "endpointAddress" ? "<endpoint>" : key === "nameResolution" ? undefined : field,
    );
  if (!isDeepStrictEqual(withoutEndpoints(local.data), withoutEndpoints(compose.data))) {
    report(
      compose.document,
      ["spec"],
      `must equal ${daprConfigFile} except for exporter endpoints and name resolution`,
    );
  }
}

/**
 * An extra worker pool (its own WorkerId, so its own subscription and consumer group) runs the
 * worker under `matoolkit-worker-<pool>`: the worker's command and rules, its own ports (the
 * components' scopes must name it too: check-component-scopes.ts).
 */
const workerPoolAppIdPattern = /^matoolkit-worker-[a-z0-9][a-z0-9-]{0,30}$/;

function extraWorkerPool(app: {
  appID: string;
  appPort?: number;
  daprHTTPPort?: number;
  daprGRPCPort?: number;
}) {
  if (!workerPoolAppIdPattern.test(app.appID)) return undefined;
  const worker = daprApps.find((candidate) => candidate.appId === "matoolkit-worker");
  if (worker === undefined) return undefined;
  // Its ports are its own (checked for clashes below); the rest is the worker's convention.
  return {
    ...worker,
    appId: app.appID,
    appPort: app.appPort ?? worker.appPort,
    daprHttpPort: app.daprHTTPPort ?? worker.daprHttpPort,
    daprGrpcPort: app.daprGRPCPort ?? worker.daprGrpcPort,
    env: {},
  };
}

function checkExtraWorkerPool(
  app: { appID: string; env?: Record<string, string> },
  apps: readonly { appID: string; env?: Record<string, string> }[],
  report: (path: PropertyKey[], message: string) => void,
): void {
  // Ports shared with another app are refused by the run template's own schema check.
  const workerId = app.env?.MATOOLKIT_WORKER_ID;
  if (!workerId) {
    report(["env"], `${app.appID} needs env MATOOLKIT_WORKER_ID (its pool's WorkerId)`);
    return;
  }
  // Two pools on one WorkerId would compete for the same jobs under different consumer groups.
  const other = apps.find(
    (candidate) => candidate !== app && candidate.env?.MATOOLKIT_WORKER_ID === workerId,
  );
  if (other !== undefined)
    report(["env"], `${app.appID} shares MATOOLKIT_WORKER_ID ${workerId} with ${other.appID}`);
}
