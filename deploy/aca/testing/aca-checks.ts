import { posix } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { evaluateEnv, type EnvEntry } from "./bicep-eval.ts";
import {
  arrayItems,
  literalOf,
  matchingClose,
  objectEntries,
  readBicep,
  referencedIdentifiers,
  splitTopLevel,
  type BicepFile,
} from "./bicep-reader.ts";

/**
 * The checks of deploy/aca and azure.yaml, each returning its problems (empty: fine). They read
 * through `Sources`, so a test can hand one a broken copy of a single file and see it fail.
 */
export interface Sources {
  /** Repository-relative paths (posix). */
  read(path: string): string;
  exists(path: string): boolean;
  /** Every file under a directory, repository-relative. */
  list(directory: string): string[];
}

export const acaDir = "deploy/aca";
const modulesDir = `${acaDir}/modules`;

export function bicepFiles(sources: Sources): string[] {
  return sources.list(acaDir).filter((path) => path.endsWith(".bicep"));
}

const bicepCache = new WeakMap<Sources, Map<string, BicepFile>>();
export function bicep(sources: Sources, path: string): BicepFile {
  let cache = bicepCache.get(sources);
  if (cache === undefined) bicepCache.set(sources, (cache = new Map()));
  let file = cache.get(path);
  if (file === undefined) cache.set(path, (file = readBicep(sources.read(path))));
  return file;
}

// ---------------------------------------------------------------------------------------------
// Structure: modules, parameters, loaded files, API versions

export function structureProblems(sources: Sources): string[] {
  const problems: string[] = [];
  for (const path of bicepFiles(sources)) {
    const file = bicep(sources, path);
    const referenced = referencedIdentifiers(file.code);
    for (const param of file.params) {
      if (!referenced.has(param.name))
        problems.push(`${path}: param ${param.name} is declared but never used`);
    }
    for (const name of file.vars.keys()) {
      if (!referenced.has(name)) problems.push(`${path}: var ${name} is declared but never used`);
    }
    for (const resource of file.resources) {
      if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(resource.apiVersion)) {
        problems.push(
          `${path}: resource ${resource.symbol} has a malformed API version ${resource.apiVersion}`,
        );
      }
    }
    for (const loaded of file.loadedFiles) {
      const target = posix.join(posix.dirname(path), loaded);
      if (!sources.exists(target)) problems.push(`${path}: loads ${loaded}, which does not exist`);
    }
    problems.push(...wholeOutputsProblems(path, file));
    for (const module of file.modules) {
      const target = posix.join(posix.dirname(path), module.path);
      if (!sources.exists(target)) {
        problems.push(`${path}: module ${module.symbol} refers to ${module.path}, which does not exist`);
        continue;
      }
      problems.push(...moduleCallProblems(path, file, module.symbol, module.body, bicep(sources, target)));
    }
  }
  problems.push(...parameterFileProblems(sources));
  return problems;
}

/**
 * A module's whole `outputs` object used as a value (`x: stage.outputs`, `var v = stage.outputs`,
 * `...stage.outputs`): Bicep compiles it to `reference(...).outputs`, whose entries are
 * `{type, value}` wrappers, not the values (Azure/bicep#16792, #13947), so the receiving module
 * reads `{type, value}` where it expects a string and the deployment fails with InvalidTemplate.
 * Each output must be read on its own (`stage.outputs.name`).
 */
function wholeOutputsProblems(path: string, file: BicepFile): string[] {
  const problems: string[] = [];
  for (const module of file.modules) {
    const whole = new RegExp(`(?<![\\w.])${module.symbol}\\.outputs(?![\\w.[?])`, "g");
    for (const match of file.code.matchAll(whole)) {
      const lineStart = file.code.lastIndexOf("\n", match.index) + 1;
      const lineEnd = file.code.indexOf("\n", match.index);
      const line = file.code.slice(lineStart, lineEnd === -1 ? undefined : lineEnd).trim();
      problems.push(
        `${path}: \`${line}\` uses ${module.symbol}.outputs whole; pass each output on its own (Azure/bicep#16792)`,
      );
    }
  }
  return problems;
}

/** The parameters a module call passes, its `...spread` variables resolved. */
export function passedParams(file: BicepFile, body: string): Map<string, string> {
  const params = objectEntries(objectEntries(body).get("params") ?? "{}");
  const passed = new Map<string, string>();
  for (const [key, value] of params) {
    if (!key.startsWith("...")) {
      passed.set(key, value);
      continue;
    }
    const spread = file.vars.get(value);
    if (spread === undefined) throw new Error(`spread of ${value}, which is no variable`);
    for (const [spreadKey, spreadValue] of objectEntries(spread)) passed.set(spreadKey, spreadValue);
  }
  return passed;
}

function moduleCallProblems(
  path: string,
  file: BicepFile,
  symbol: string,
  body: string,
  target: BicepFile,
): string[] {
  const problems: string[] = [];
  const passed = passedParams(file, body);
  const declared = new Map(target.params.map((param) => [param.name, param]));
  for (const key of passed.keys()) {
    if (!declared.has(key))
      problems.push(`${path}: module ${symbol} passes ${key}, which the module does not declare`);
  }
  for (const param of target.params) {
    if (param.defaultValue === undefined && !passed.has(param.name)) {
      problems.push(`${path}: module ${symbol} does not pass the required param ${param.name}`);
    }
    const value = literalOf(passed.get(param.name) ?? "");
    if (param.allowed !== undefined && value !== undefined && !param.allowed.includes(value)) {
      problems.push(
        `${path}: module ${symbol} passes ${param.name} '${value}', not one of ${param.allowed.join(", ")}`,
      );
    }
  }
  return problems;
}

/** main.*.bicepparam and main.parameters.json against main.bicep's parameters. */
function parameterFileProblems(sources: Sources): string[] {
  const problems: string[] = [];
  const main = bicep(sources, `${acaDir}/main.bicep`);
  const declared = new Map(main.params.map((param) => [param.name, param]));
  const check = (file: string, given: Map<string, string | undefined>) => {
    for (const [name, value] of given) {
      const param = declared.get(name);
      if (param === undefined) problems.push(`${file}: sets ${name}, which main.bicep does not declare`);
      else if (
        param.allowed !== undefined &&
        value !== undefined &&
        !value.startsWith("${") &&
        !param.allowed.includes(value)
      ) {
        problems.push(`${file}: ${name} '${value}' is not one of ${param.allowed.join(", ")}`);
      }
    }
    for (const param of main.params) {
      if (param.defaultValue === undefined && !given.has(param.name)) {
        problems.push(`${file}: does not set the required param ${param.name}`);
      }
    }
  };
  const paramFiles = sources.list(acaDir).filter((path) => path.endsWith(".bicepparam"));
  if (paramFiles.length < 2) problems.push(`${acaDir}: expected a .bicepparam file per environment`);
  for (const file of paramFiles) {
    const text = sources.read(file);
    const using = /^using\s+'([^']+)'/m.exec(text)?.[1];
    if (using === undefined || !sources.exists(posix.join(posix.dirname(file), using))) {
      problems.push(`${file}: its using '${using ?? ""}' does not name an existing template`);
    }
    const given = new Map<string, string | undefined>();
    for (const match of text.matchAll(/^param\s+(\w+)\s*=\s*(.+)$/gm)) {
      const expression = match[2]!.trim();
      const fromEnv = /^readEnvironmentVariable\('[^']+',\s*'([^']*)'\)$/.exec(expression);
      given.set(match[1]!, fromEnv !== null ? fromEnv[1] : literalOf(expression));
    }
    check(file, given);
  }
  const jsonFile = `${acaDir}/main.parameters.json`;
  if (sources.exists(jsonFile)) {
    const json = z
      .object({ parameters: z.record(z.string(), z.object({ value: z.unknown() })) })
      .parse(JSON.parse(sources.read(jsonFile)));
    const given = new Map<string, string | undefined>();
    for (const [name, { value }] of Object.entries(json.parameters)) {
      const text = typeof value === "string" ? value : undefined;
      // azd substitutes ${VAR=default}: check the default against @allowed.
      const withDefault = text === undefined ? undefined : /^\$\{\w+=([^}]*)\}$/.exec(text)?.[1];
      given.set(name, withDefault ?? text);
    }
    check(jsonFile, given);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Deployment order

/**
 * The resources and modules `symbol` waits for, directly or not: those its body names (a
 * `dependsOn` entry, `parent`, a property read), the way ARM orders a Bicep deployment.
 */
export function dependencyClosure(file: BicepFile, symbol: string): Set<string> {
  const bodies = new Map<string, string>([
    ...file.resources.map((r) => [r.symbol, r.body] as const),
    ...file.modules.map((m) => [m.symbol, m.body] as const),
  ]);
  const seen = new Set<string>();
  const visit = (current: string) => {
    for (const name of referencedIdentifiers(bodies.get(current) ?? "")) {
      if (bodies.has(name) && name !== current && !seen.has(name)) {
        seen.add(name);
        visit(name);
      }
    }
  };
  visit(symbol);
  return seen;
}

/**
 * postgres.bicep creates the database only after every Entra administrator: a database created
 * before any Entra administrator exists is owned by azuresu, and no Entra principal can take it
 * over (learn.microsoft.com/azure/postgresql/security/security-entra-concepts, "Limitations and
 * considerations"): the migrate role could then grant nothing on it.
 */
export function postgresOrderProblems(sources: Sources): string[] {
  const path = `${modulesDir}/postgres.bicep`;
  const file = bicep(sources, path);
  const ofType = (type: string) => file.resources.filter((r) => r.type === type && !r.existing);
  const administrators = ofType("Microsoft.DBforPostgreSQL/flexibleServers/administrators");
  const databases = ofType("Microsoft.DBforPostgreSQL/flexibleServers/databases");
  const problems: string[] = [];
  if (administrators.length === 0) problems.push(`${path}: no Entra administrator`);
  for (const database of databases) {
    const waitsFor = dependencyClosure(file, database.symbol);
    for (const admin of administrators) {
      if (!waitsFor.has(admin.symbol)) {
        problems.push(
          `${path}: database ${database.symbol} is created without waiting for Entra administrator ${admin.symbol}`,
        );
      }
    }
  }
  return problems;
}

/**
 * Key Vault names: a soft-deleted vault keeps its name for the whole retention period, and purge
 * protection forbids purging it earlier ("You cannot reuse the name of a key vault that has been
 * soft-deleted until the retention period has passed":
 * learn.microsoft.com/azure/key-vault/general/soft-delete-overview). A name made only of the
 * resource group and the environment name is the same after `azd down --purge` and `azd up`: the
 * vault name must also include a value made anew with the environment, a parameter that every
 * caller feeds with a managed identity's principal id.
 */
export function keyVaultNameProblems(sources: Sources): string[] {
  const path = `${modulesDir}/key-vault.bicep`;
  const file = bicep(sources, path);
  const problems: string[] = [];
  const vault = file.resources.find((r) => r.type === "Microsoft.KeyVault/vaults" && !r.existing);
  if (vault === undefined) return [`${path}: no vault`];
  const name = objectEntries(vault.body).get("name") ?? "";
  const open = name.indexOf("uniqueString(");
  const args =
    open === -1
      ? []
      : splitTopLevel(
          name.slice(open + "uniqueString(".length, matchingClose(name, open + "uniqueString".length)),
        );
  const params = new Set(file.params.map((param) => param.name));
  const seeds = args.filter((arg) => params.has(arg));

  if (seeds.length === 0) {
    problems.push(
      `${path}: the vault name (${name}) is the same each time the environment is created: after azd down, the soft-deleted vault keeps it for the retention period`,
    );
    return problems;
  }
  const foundation = bicep(sources, `${modulesDir}/foundation.bicep`);
  for (const call of foundation.modules.filter((m) => m.path === "key-vault.bicep")) {
    const passed = passedParams(foundation, call.body);
    for (const seed of seeds) {
      if (!/\bprincipalIdOf\b/.test(passed.get(seed) ?? "")) {
        problems.push(
          `foundation.bicep: module ${call.symbol} passes ${seed} = ${passed.get(seed) ?? "nothing"}, not a managed identity's principal id (made anew with the environment)`,
        );
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Secrets

const secretPatterns: ReadonlyArray<readonly [RegExp, string]> = [
  [/administratorLoginPassword/i, "a PostgreSQL administrator password"],
  [/SharedAccessKey/i, "a Service Bus shared access key"],
  [/AccountKey=/i, "a storage account key"],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, "a private key"],
  [/password\s*[:=]\s*'[^']+'/i, "a password literal"],
  [/postgres(ql)?:\/\/[^'@\s/]*:[^'@\s]+@/i, "a password in a connection URL"],
  [/listKeys\(\)\.(primaryConnectionString|connectionString)/, "a connection string from listKeys"],
];

export function secretProblems(sources: Sources): string[] {
  const files = sources
    .list(acaDir)
    .filter((path) => /\.(bicep|bicepparam|json|ya?ml|sh)$/.test(path))
    .concat(["azure.yaml"]);
  const problems: string[] = [];
  for (const path of files) {
    const text = sources.read(path);
    for (const [pattern, what] of secretPatterns) {
      if (pattern.test(text)) problems.push(`${path}: holds ${what}`);
    }
    if (path.endsWith(".bicep") && /@secure\(\)/.test(text))
      problems.push(`${path}: takes a @secure() parameter`);
    // A key made by the template (newGuid, a vault secret resource) is made anew by each deployment.
    if (path.endsWith(".bicep") && /\bnewGuid\(/.test(text))
      problems.push(
        `${path}: generates a value at deployment (newGuid), which each deployment would replace`,
      );
    if (path.endsWith(".bicep") && /'Microsoft\.KeyVault\/vaults\/secrets@/.test(text))
      problems.push(`${path}: writes a Key Vault secret, which each deployment would replace`);
  }
  const postgres = sources.read(`${modulesDir}/postgres.bicep`);
  if (!/passwordAuth:\s*'Disabled'/.test(postgres))
    problems.push("postgres.bicep: password authentication is not disabled");
  if (!/activeDirectoryAuth:\s*'Enabled'/.test(postgres))
    problems.push("postgres.bicep: Entra authentication is not enabled");
  if (!/disableLocalAuth:\s*true/.test(sources.read(`${modulesDir}/service-bus.bicep`))) {
    problems.push("service-bus.bicep: local (SAS) authentication is not disabled");
  }
  if (!/adminUserEnabled:\s*false/.test(sources.read(`${modulesDir}/registry.bicep`))) {
    problems.push("registry.bicep: the admin user is not disabled");
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Service Bus: topics, subscriptions, grants

export interface BusSubscription {
  readonly topic: string;
  readonly name: string;
  /** Identity (service) that receives from it. */
  readonly consumer: string;
  readonly filter: string;
}

export interface Grant {
  readonly who: string;
  readonly role: "sender" | "receiver" | "owner";
  readonly topic: string;
  readonly subscription?: string;
}

export interface ServiceBusModel {
  readonly topics: string[];
  readonly subscriptions: BusSubscription[];
  readonly grants: Grant[];
  readonly roleIds: Map<string, string>;
}

export function serviceBusModel(sources: Sources, workerId: string): ServiceBusModel {
  const file = bicep(sources, `${modulesDir}/service-bus.bicep`);
  const strings = (name: string) =>
    arrayItems(file.vars.get(name) ?? "[]").map((item) => resolveString(file, item, { workerId }));
  const base = strings("baseTopics");
  // topicNames = concat(baseTopics, map(baseTopics, t => '${t}-deadletter')): read the suffix.
  const twin = /map\(baseTopics,\s*t\s*=>\s*'\$\{t\}([^']*)'\)/.exec(file.vars.get("topicNames") ?? "");
  const topics = [...base, ...(twin === null ? [] : base.map((topic) => `${topic}${twin[1]}`))];
  const subscriptions = arrayItems(file.vars.get("subscriptions") ?? "[]").map((item) => {
    const entries = objectEntries(item);
    const field = (key: string) => resolveString(file, entries.get(key) ?? "''", { workerId });
    return {
      topic: field("topic"),
      name: field("name"),
      consumer: field("consumer"),
      filter: field("filter"),
    };
  });
  const topicGrants = arrayItems(file.vars.get("topicGrants") ?? "[]").map((item) => {
    const entries = objectEntries(item);
    const field = (key: string) => resolveString(file, entries.get(key) ?? "''", { workerId });
    return { who: field("who"), role: field("role") as Grant["role"], topic: field("topic") };
  });
  const receiverGrants = /map\(subscriptions,[\s\S]*who:\s*s\.consumer[\s\S]*role:\s*'receiver'/.test(
    file.vars.get("subscriptionGrants") ?? "",
  )
    ? subscriptions.map((s) => ({
        who: s.consumer,
        role: "receiver" as const,
        topic: s.topic,
        subscription: s.name,
      }))
    : [];
  const roleIds = new Map(
    [...objectEntries(file.vars.get("roleIds") ?? "{}")].map(([key, value]) => [
      key,
      literalOf(value) ?? value,
    ]),
  );
  return { topics, subscriptions, grants: [...topicGrants, ...receiverGrants], roleIds };
}

/** A string literal, a variable holding one, or `'…${param}…'` with the given params. */
function resolveString(file: BicepFile, expression: string, params: Record<string, string>): string {
  const trimmed = expression.trim();
  const variable = file.vars.get(trimmed);
  if (variable !== undefined) return resolveString(file, variable, params);
  const substituted = trimmed.replace(/\$\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole);
  const value = literalOf(substituted);
  if (value === undefined) throw new Error(`not a literal: ${expression}`);
  return value;
}

export interface ExpectedTopology {
  readonly topics: readonly string[];
  readonly subscriptions: ReadonlyArray<Omit<BusSubscription, "consumer"> & { readonly consumer: string }>;
}

export function topologyProblems(sources: Sources, workerId: string, expected: ExpectedTopology): string[] {
  const problems: string[] = [];
  const model = serviceBusModel(sources, workerId);
  const key = (s: Omit<BusSubscription, "consumer"> & { consumer: string }) =>
    `${s.topic}/${s.name} by ${s.consumer} filter [${s.filter}]`;
  diff(problems, "topic", model.topics, expected.topics);
  diff(problems, "subscription", model.subscriptions.map(key), expected.subscriptions.map(key));
  const text = sources.read(`${modulesDir}/service-bus.bicep`);
  const block = (type: string) =>
    bicep(sources, `${modulesDir}/service-bus.bicep`).resources.find((r) => r.type === type && !r.existing)
      ?.body ?? "";
  const topicBody = block("Microsoft.ServiceBus/namespaces/topics");
  for (const [setting, pattern] of [
    ["duplicate detection", /requiresDuplicateDetection:\s*true/],
    ["10-minute duplicate window", /duplicateDetectionHistoryTimeWindow:\s*'PT10M'/],
    ["7-day topic TTL", /defaultMessageTimeToLive:\s*'P7D'/],
    ["1024 MB", /maxSizeInMegabytes:\s*1024/],
    ["no partitioning", /enablePartitioning:\s*false/],
  ] as const) {
    if (!pattern.test(topicBody)) problems.push(`topics: missing ${setting} (000 "Topics")`);
  }
  const subscriptionBody = block("Microsoft.ServiceBus/namespaces/topics/subscriptions");
  for (const [setting, pattern] of [
    ["max delivery count 10", /maxDeliveryCount:\s*10\b/],
    ["1-minute lock", /lockDuration:\s*'PT1M'/],
    ["14-day TTL", /defaultMessageTimeToLive:\s*'P14D'/],
    ["dead-lettering on expiration", /deadLetteringOnMessageExpiration:\s*true/],
  ] as const) {
    if (!pattern.test(subscriptionBody))
      problems.push(`subscriptions: missing ${setting} (000 "Subscriptions")`);
  }
  if (!/sqlFilter:\s*\{\s*sqlExpression:\s*s\.filter\s*\}/.test(text) || !/\$Default/.test(text)) {
    problems.push("subscriptions: the filter is not applied as the $Default SQL rule");
  }
  return problems;
}

function diff(
  problems: string[],
  what: string,
  actual: readonly string[],
  expected: readonly string[],
): void {
  for (const item of expected) if (!actual.includes(item)) problems.push(`missing ${what} ${item}`);
  for (const item of actual)
    if (!expected.includes(item)) problems.push(`${what} ${item} is not in the code's topology`);
}

// ---------------------------------------------------------------------------------------------
// Role assignments: only known role definitions; each identity exactly the roles its service uses

/** The role definitions deploy/aca may assign (built-in role GUIDs, Azure RBAC reference). */
export const allowedRoles: Readonly<Record<string, string>> = {
  "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39": "Azure Service Bus Data Sender",
  "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0": "Azure Service Bus Data Receiver",
  "090c5cfd-751d-490a-894a-3ce6f1109419": "Azure Service Bus Data Owner",
  "4633458b-17de-408a-b874-0445c86b69e6": "Key Vault Secrets User",
  "b86a8fe4-44ce-4948-aee5-eccb2c155cd7": "Key Vault Secrets Officer",
  "db79e9a7-68ee-4b58-9aeb-b90e7c24fcba": "Key Vault Certificate User",
  "7f951dda-4ed3-4680-a7ca-43fe172d538d": "AcrPull",
};

/** Every access of every identity, as `who: what` lines. */
export function identityAccess(sources: Sources, workerId: string): Map<string, string[]> {
  const access = new Map<string, string[]>();
  const add = (who: string, what: string) => access.set(who, [...(access.get(who) ?? []), what]);
  const model = serviceBusModel(sources, workerId);
  for (const grant of model.grants) {
    const role = allowedRoles[model.roleIds.get(grant.role) ?? ""] ?? `unknown role ${grant.role}`;
    add(
      grant.who,
      `${role} on ${grant.topic}${grant.subscription === undefined ? "" : `/${grant.subscription}`}`,
    );
  }
  const foundation = bicep(sources, `${modulesDir}/foundation.bicep`);
  const principalsOf = (moduleSymbol: string, param: string): string[] => {
    const module = foundation.modules.find((m) => m.symbol === moduleSymbol);
    if (module === undefined) return [];
    return arrayItems(passedParams(foundation, module.body).get(param) ?? "[]").map((item) =>
      identityName(item),
    );
  };
  const roleOf = (path: string, variable: string) =>
    allowedRoles[literalOf(bicep(sources, path).vars.get(variable) ?? "") ?? ""] ?? `unknown role in ${path}`;
  for (const who of principalsOf("registry", "pullerPrincipalIds")) {
    add(who, `${roleOf(`${modulesDir}/registry.bicep`, "acrPull")} on the registry`);
  }
  // Each vault (key-vault.bicep, once per module call): its readers and its officers.
  for (const vault of foundation.modules.filter((m) => m.path === "key-vault.bicep")) {
    for (const [param, role] of [
      ["secretReaderPrincipalIds", "keyVaultSecretsUser"],
      ["secretOfficerPrincipalIds", "keyVaultSecretsOfficer"],
    ] as const) {
      for (const who of principalsOf(vault.symbol, param)) {
        add(who, `${roleOf(`${modulesDir}/key-vault.bicep`, role)} on vault ${vault.symbol}`);
      }
    }
  }
  const postgres = foundation.modules.find((m) => m.symbol === "postgres");
  const migrate =
    postgres === undefined ? undefined : passedParams(foundation, postgres.body).get("migratePrincipalId");
  if (migrate !== undefined) add(identityName(migrate), "PostgreSQL Entra administrator");
  const apps = bicep(sources, `${modulesDir}/apps.bicep`);
  const dbRoles = apps.resources.find((r) => r.symbol === "dbRolesJob")?.body ?? "";
  const appRoles = /name:\s*'APP_ROLES'[\s\S]*?map\((\[[^\]]*\])/.exec(dbRoles)?.[1];
  for (const item of appRoles === undefined ? [] : arrayItems(appRoles)) {
    add(literalOf(item) ?? item, "PostgreSQL role matoolkit_app (application tables)");
  }
  const daprRole = /name:\s*'DAPR_STATE_ROLE',\s*value:\s*'\$\{names\['([\w-]+)'\]\}/.exec(dbRoles)?.[1];
  if (daprRole !== undefined) add(daprRole, "PostgreSQL role for the dapr_* tables");
  return access;
}

/** `principalIdOf['admin-api']` / `principalIdOf.worker` (foundation.bicep) → the identity's role. */
function identityName(expression: string): string {
  const match = /principalIdOf(?:\['([\w-]+)'\]|\.(\w+))/.exec(expression);
  if (match === null) throw new Error(`not an identity reference: ${expression}`);
  return (match[1] ?? match[2])!;
}

export function roleDefinitionProblems(sources: Sources): string[] {
  const problems: string[] = [];
  // service-bus.bicep grants by role name: each name must carry that identity's principal id.
  const foundation = bicep(sources, `${modulesDir}/foundation.bicep`);
  const serviceBus = foundation.modules.find((m) => m.symbol === "serviceBus");
  const mapping =
    serviceBus === undefined ? "{}" : (passedParams(foundation, serviceBus.body).get("principalIds") ?? "{}");
  for (const [role, value] of objectEntries(mapping)) {
    if (identityName(value) !== role) {
      problems.push(`foundation.bicep: service-bus principal ${role} is the ${identityName(value)} identity`);
    }
  }
  for (const path of bicepFiles(sources)) {
    const file = bicep(sources, path);
    for (const match of file.code.matchAll(
      /'([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})'/gi,
    )) {
      if (allowedRoles[match[1]!.toLowerCase()] === undefined) {
        problems.push(`${path}: role definition ${match[1]} is not one of the allowed built-in roles`);
      }
    }
    for (const resource of file.resources.filter(
      (r) => r.type === "Microsoft.Authorization/roleAssignments",
    )) {
      if (
        !/roleDefinitionId:\s*subscriptionResourceId\('Microsoft\.Authorization\/roleDefinitions',/.test(
          resource.body,
        )
      ) {
        problems.push(`${path}: ${resource.symbol} does not name a built-in role definition`);
      }
      if (!/principalType:\s*'ServicePrincipal'/.test(resource.body)) {
        problems.push(`${path}: ${resource.symbol} is not for a managed identity (principalType)`);
      }
      if (!/\bscope:\s*\w+/.test(resource.body)) {
        problems.push(`${path}: ${resource.symbol} is not scoped to a resource`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Container apps: app ids, ports, commands, variables

export interface ContainerAppModel {
  readonly symbol: string;
  readonly serviceName: string;
  readonly command: string;
  readonly appId: string;
  readonly appPort: number;
  readonly healthPort: number;
  readonly ingressPort: number;
  readonly ingressExternal: boolean;
  readonly minReplicas: number;
  readonly maxReplicas: string;
  readonly env: EnvEntry[];
  readonly scaleRules: string;
  readonly platformOnlyIdentities: string;
  /** Identities besides the app's own (the state store's, the scaler's), as written. */
  readonly extraIdentities: string;
}

export function containerApps(sources: Sources, params: ReadonlyMap<string, string>): ContainerAppModel[] {
  const apps = bicep(sources, `${modulesDir}/apps.bicep`);
  return apps.modules
    .filter((module) => module.path === "container-app.bicep")
    .map((module) => {
      const passed = passedParams(apps, module.body);
      const text = (key: string) => passed.get(key) ?? "";
      const literal = (key: string) => literalOf(text(key)) ?? apps.vars.get(text(key)) ?? text(key);
      return {
        symbol: module.symbol,
        serviceName: literal("serviceName"),
        command: literal("command"),
        appId: literalOf(literal("daprAppId")) ?? literal("daprAppId"),
        appPort: Number(text("daprAppPort")),
        healthPort: Number(text("healthPort")),
        ingressPort: Number(text("ingressTargetPort") || "0"),
        ingressExternal: text("ingressExternal") === "true",
        minReplicas: Number(text("minReplicas")),
        maxReplicas: text("maxReplicas"),
        env: evaluateEnv(apps, text("env"), params),
        scaleRules: text("scaleRules"),
        platformOnlyIdentities: text("platformOnlyIdentityIds"),
        extraIdentities: text("extraIdentityIds"),
      };
    });
}

/** The migrate job's variables. */
export function migrateJobEnv(sources: Sources, params: ReadonlyMap<string, string>): EnvEntry[] {
  const apps = bicep(sources, `${modulesDir}/apps.bicep`);
  return evaluateEnv(apps, "migrateEnv", params);
}

// ---------------------------------------------------------------------------------------------
// Dapr components: Container Apps' schema, in Bicep and in deploy/aca/components/*.yaml

/** Azure Container Apps' Dapr component (the YAML of `az containerapp env dapr-component set`). */
export const acaDaprComponentSchema = z.strictObject({
  componentType: z.string().regex(/^(pubsub|state|bindings|secretstores|configuration|lock)\.[a-z0-9.-]+$/),
  version: z.string().regex(/^v\d+(alpha\d+|beta\d+)?$/),
  ignoreErrors: z.boolean().optional(),
  initTimeout: z
    .string()
    .regex(/^\d+[smh]$/)
    .optional(),
  secretStoreComponent: z.string().min(1).optional(),
  metadata: z
    .array(
      z
        .strictObject({
          name: z.string().min(1),
          value: z.string().optional(),
          secretRef: z.string().min(1).optional(),
        })
        .refine((item) => (item.value === undefined) !== (item.secretRef === undefined), {
          message: "exactly one of value or secretRef",
        }),
    )
    .min(1),
  secrets: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        value: z.string().optional(),
        keyVaultUrl: z.url().optional(),
        identity: z.string().optional(),
      }),
    )
    .optional(),
  scopes: z.array(z.string().min(1)).min(1).optional(),
});
export type AcaDaprComponent = z.infer<typeof acaDaprComponentSchema>;

export interface ComponentShape {
  readonly name: string;
  readonly componentType: string;
  readonly version: string;
  readonly metadataNames: string[];
  readonly scopes: string[];
}

/** The components environment.bicep creates, its loop over pubsubOwners expanded. */
export function bicepComponents(sources: Sources, workerAppId: string): ComponentShape[] {
  const file = bicep(sources, `${modulesDir}/environment.bicep`);
  const resolve = (expression: string, bound: Record<string, string>) => {
    const trimmed = expression.trim();
    if (trimmed === "workerAppId") return workerAppId;
    const member = /^(\w+)\.(\w+)$/.exec(trimmed);
    if (member !== null) return bound[member[2]!] ?? trimmed;
    return (
      literalOf(
        trimmed.replace(/\$\{(\w+)\.(\w+)\}/g, (whole, _o: string, key: string) => bound[key] ?? whole),
      ) ?? trimmed
    );
  };
  const shapes: ComponentShape[] = [];
  for (const resource of file.resources.filter(
    (r) => r.type === "Microsoft.App/managedEnvironments/daprComponents",
  )) {
    const loop = /^\[\s*for\s+(\w+)\s+in\s+(\w+)\s*:\s*/.exec(resource.body);
    const bodies: Array<{ body: string; bound: Record<string, string> }> = [];
    if (loop === null) bodies.push({ body: resource.body, bound: {} });
    else {
      const inner = resource.body.slice(loop[0].length, resource.body.lastIndexOf("]")).trim();
      for (const item of arrayItems(file.vars.get(loop[2]!) ?? "[]")) {
        const bound = Object.fromEntries(
          [...objectEntries(item)].map(([key, value]) => [key, resolve(value, {})]),
        );
        bodies.push({ body: inner, bound });
      }
    }
    for (const { body, bound } of bodies) {
      const entries = objectEntries(body);
      const properties = objectEntries(entries.get("properties") ?? "{}");
      shapes.push({
        name: resolve(entries.get("name") ?? "''", bound),
        componentType: resolve(properties.get("componentType") ?? "''", bound),
        version: resolve(properties.get("version") ?? "''", bound),
        metadataNames: arrayItems(properties.get("metadata") ?? "[]").map((item) =>
          resolve(objectEntries(item).get("name") ?? "''", bound),
        ),
        scopes: arrayItems(properties.get("scopes") ?? "[]").map((item) => resolve(item, bound)),
      });
    }
  }
  return shapes;
}

/** deploy/aca/components/*.yaml: each file's problems against the schema, and its shape. */
export function componentFiles(sources: Sources): { shapes: ComponentShape[]; problems: string[] } {
  const problems: string[] = [];
  const shapes: ComponentShape[] = [];
  for (const path of sources.list(`${acaDir}/components`).filter((p) => p.endsWith(".yaml"))) {
    const parsed = acaDaprComponentSchema.safeParse(parse(sources.read(path)));
    if (!parsed.success) {
      problems.push(
        `${path}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      );
      continue;
    }
    const name = /--dapr-component-name\s+([\w-]+)/.exec(sources.read(path))?.[1];
    if (name === undefined) problems.push(`${path}: does not say its component name (--dapr-component-name)`);
    shapes.push({
      name: name ?? path,
      componentType: parsed.data.componentType,
      version: parsed.data.version,
      metadataNames: parsed.data.metadata.map((item) => item.name),
      scopes: parsed.data.scopes ?? [],
    });
  }
  return { shapes, problems };
}

/** A Dapr component of components/azure, reduced to what Container Apps' schema carries. */
export interface ReferenceComponent {
  readonly name: string;
  readonly type: string;
  readonly version: string;
  readonly metadataNames: readonly string[];
}

/**
 * Each shape matches the reference of its type (same type, version, metadata field names) and is
 * scoped to every app that uses it; `users` maps a component name to the app ids that use it.
 */
export function componentProblems(
  origin: string,
  shapes: readonly ComponentShape[],
  references: readonly ReferenceComponent[],
  users: ReadonlyMap<string, readonly string[]>,
): string[] {
  const problems: string[] = [];
  for (const shape of shapes) {
    const reference = references.find((r) => r.type === shape.componentType);
    if (reference === undefined) {
      problems.push(`${origin} ${shape.name}: type ${shape.componentType} is not in components/azure`);
      continue;
    }
    if (shape.version !== reference.version) {
      problems.push(
        `${origin} ${shape.name}: version ${shape.version}, components/azure has ${reference.version}`,
      );
    }
    const expected = [...reference.metadataNames].sort().join(",");
    if ([...shape.metadataNames].sort().join(",") !== expected) {
      problems.push(
        `${origin} ${shape.name}: metadata ${[...shape.metadataNames].sort().join(",")}, components/azure has ${expected}`,
      );
    }
    if (!shape.name.startsWith(reference.name)) {
      problems.push(`${origin} ${shape.name}: not named after ${reference.name}`);
    }
  }
  for (const [name, appIds] of users) {
    const shape = shapes.find((s) => s.name === name);
    if (shape === undefined) {
      problems.push(`${origin}: no component ${name}, which ${appIds.join(", ")} use`);
      continue;
    }
    for (const appId of appIds) {
      if (!shape.scopes.includes(appId))
        problems.push(`${origin} ${name}: scopes lack ${appId}, which uses it`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// azure.yaml

export const azureYamlSchema = z.object({
  name: z.string().min(1),
  infra: z.strictObject({ provider: z.literal("bicep"), path: z.string().min(1), module: z.string().min(1) }),
  services: z.record(
    z.string(),
    z.strictObject({
      project: z.string().min(1),
      language: z.enum(["ts", "js"]),
      host: z.literal("containerapp"),
      docker: z.strictObject({ path: z.string().min(1), context: z.string().min(1) }),
    }),
  ),
  hooks: z.partialRecord(
    z.enum(["preprovision", "postprovision", "predeploy", "postdeploy", "preup", "postup"]),
    z.strictObject({
      shell: z.enum(["sh", "pwsh"]),
      run: z.string().min(1),
      continueOnError: z.boolean().optional(),
    }),
  ),
});

export function azureYamlProblems(
  sources: Sources,
  imageCommands: readonly string[],
  serviceNames: readonly string[],
): string[] {
  const problems: string[] = [];
  const parsed = azureYamlSchema.safeParse(parse(sources.read("azure.yaml")));
  if (!parsed.success) {
    return [`azure.yaml: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`];
  }
  const yaml = parsed.data;
  if (!sources.exists(posix.join(yaml.infra.path, `${yaml.infra.module}.bicep`))) {
    problems.push(`azure.yaml: infra ${yaml.infra.path}/${yaml.infra.module}.bicep does not exist`);
  }
  for (const [name, service] of Object.entries(yaml.services)) {
    const dockerfile = posix.normalize(posix.join(service.project, service.docker.path));
    if (!sources.exists(dockerfile))
      problems.push(`azure.yaml: service ${name}: ${dockerfile} does not exist`);
    if (!imageCommands.includes(name))
      problems.push(`azure.yaml: service ${name} is no command of the image`);
  }
  for (const name of serviceNames)
    if (!(name in yaml.services)) problems.push(`azure.yaml: no service ${name}`);
  const outputs = bicep(sources, posix.join(yaml.infra.path, `${yaml.infra.module}.bicep`)).outputs;
  const checked = new Set<string>();
  for (const [hook, { run }] of Object.entries(yaml.hooks)) {
    const script = run.split(/\s+/)[0]!;
    if (!sources.exists(script)) {
      problems.push(`azure.yaml: hook ${hook} runs ${script}, which does not exist`);
      continue;
    }
    if (checked.has(script)) continue;
    checked.add(script);
    // Every variable the script needs from azd is an output of the template, or one azd sets in
    // every environment itself (AZURE_ENV_NAME; SERVICE_<NAME>_IMAGE_NAME after a deploy).
    for (const match of sources.read(script).matchAll(/\$\{([A-Za-z_]\w*):[?-]/g)) {
      const variable = match[1]!;
      if (!outputs.includes(variable) && !/^(SERVICE_\w+_IMAGE_NAME|AZURE_ENV_NAME)$/.test(variable)) {
        problems.push(`${script}: reads ${variable}, which ${yaml.infra.module}.bicep does not output`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// container-app.bicep: what a revision is with the placeholder image and with a release image

export interface ContainerAppShape {
  readonly daprEnabled: boolean;
  readonly appHealthEnabled: boolean;
  readonly appHealthPath: string | undefined;
  /** Probe types with their path and port expressions, e.g. `Liveness /healthz healthPort`. */
  readonly probes: readonly string[];
  readonly args: string;
  /** The ingress target port's expression, when the app has ingress. */
  readonly ingressTargetPort: string;
}

/**
 * The properties of container-app.bicep's app that depend on `placeholder`, with that parameter
 * fixed: boolean literals, `placeholder`, `!placeholder` and `[!]placeholder ? a : b` are
 * resolved; anything else is returned as written (and fails the caller's expectations).
 */
export function containerAppShape(sources: Sources, placeholder: boolean): ContainerAppShape {
  const file = bicep(sources, `${modulesDir}/container-app.bicep`);
  const app = file.resources.find((r) => r.type === "Microsoft.App/containerApps" && !r.existing);
  if (app === undefined) throw new Error("container-app.bicep: no container app");
  const resolve = (expression: string): string => {
    const trimmed = expression.trim();
    const ternary = /^(!?)placeholder\s*\?\s*/.exec(trimmed);
    if (ternary !== null) {
      const rest = trimmed.slice(ternary[0].length);
      // The `:` at depth 0 splits the branches (a branch may be an object or array literal).
      let depth = 0;
      for (let i = 0; i < rest.length; i += 1) {
        const char = rest[i]!;
        if (char === "'") i = rest.indexOf("'", i + 1);
        else if ("{[(".includes(char)) depth += 1;
        else if ("}])".includes(char)) depth -= 1;
        else if (char === ":" && depth === 0) {
          const chosen = (ternary[1] === "!") !== placeholder;
          return resolve(chosen ? rest.slice(0, i) : rest.slice(i + 1));
        }
      }
      throw new Error(`not a ternary: ${trimmed}`);
    }
    if (trimmed === "placeholder") return String(placeholder);
    if (trimmed === "!placeholder") return String(!placeholder);
    return trimmed;
  };
  const at = (text: string, ...keys: string[]): string =>
    keys.reduce((current, key) => resolve(objectEntries(current).get(key) ?? ""), text);
  const properties = at(app.body, "properties");
  const dapr = at(properties, "configuration", "dapr");
  const ingress = resolve(at(properties, "configuration", "ingress"));
  const containers = arrayItems(at(properties, "template", "containers"));
  const container = containers[0] ?? "{}";
  const probes = arrayItems(at(container, "probes")).map((probe) => {
    const entries = objectEntries(probe);
    const get = objectEntries(entries.get("httpGet") ?? "{}");
    return `${literalOf(entries.get("type") ?? "") ?? ""} ${literalOf(get.get("path") ?? "") ?? ""} ${get.get("port") ?? ""}`;
  });
  const ingressTarget = /^ingressTargetPort == 0\s*\?\s*null\s*:\s*([\s\S]*)$/.exec(ingress)?.[1] ?? ingress;
  return {
    daprEnabled: at(dapr, "enabled") === "true",
    appHealthEnabled: at(dapr, "appHealth", "enabled") === "true",
    appHealthPath: literalOf(at(dapr, "appHealth", "path")),
    probes,
    args: at(container, "args"),
    ingressTargetPort: ingressTarget.startsWith("{") ? at(ingressTarget, "targetPort") : "",
  };
}
