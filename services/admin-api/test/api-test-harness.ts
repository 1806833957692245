import type { TenantChecker } from "@matoolkit/domain";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDataSourceClient } from "@matoolkit/datasources";
import { createDb, type Db } from "@matoolkit/db";
import {
  SecretKeyring,
  secretKeyOf,
  webhookOutboundPolicyFromEnv,
  type Resolver,
  type RetentionConfig,
} from "@matoolkit/platform";
import { createEmbeddedRuntime, createLogger, type EmbeddedRuntime } from "@matoolkit/runtime";
import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { startAdminApiService, type RunningAdminApi } from "../src/admin-api-service.ts";
import { createVerifierForConfig, issueLocalToken } from "../src/auth/index.ts";
import type { TenantChangeSource } from "../src/routes/tenant-changes.routes.ts";
import type { WorkerPacingSource } from "../src/routes/worker-pacing.routes.ts";
import type { RequestLimits } from "../src/http/request-limits.ts";

/**
 * Test support (not exported): the real admin API on a real PostgreSQL and the embedded bus,
 * listening on a free port, with Admin and Reader tokens from the local signing key.
 */
const issuer = "matoolkit-local";
/** The environment variable a test runbook's `postgres` source names: the test database itself. */
export const TEST_SOURCE_DB_ENV = "MATOOLKIT_SOURCE_ADMIN_API_TEST_DB";
const audience = "api://matoolkit";

/** Response bodies are arbitrary JSON; tests read the fields they assert on. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResponse {
  readonly status: number;
  readonly body: Json;
  /** The raw body text, for "never echoes X" assertions. */
  readonly text: string;
  readonly headers: Headers;
}

export interface RequestOptions {
  /** Defaults to an Admin token; null sends no Authorization header. */
  readonly token?: string | null;
  readonly body?: string;
  readonly type?: string;
  /** More request headers, e.g. Idempotency-Key. */
  readonly headers?: Record<string, string>;
}

export interface ApiHarness {
  /** The test database's own pool, for arranging rows and asserting on them. */
  readonly db: Db;
  readonly runtime: EmbeddedRuntime;
  readonly adminToken: string;
  readonly readerToken: string;
  /** An Operator token (identity operator@example.test): runs batches, cannot publish or switch automation. */
  readonly operatorToken: string;
  /** Where `csv` sources' relative paths resolve. */
  readonly dataDir: string;
  /** The API's origin (routes outside /api: /healthz, /readyz, /problems). */
  readonly url: string;
  request(method: string, apiPath: string, options?: RequestOptions): Promise<ApiResponse>;
  stop(): Promise<void>;
}

export interface ApiHarnessOptions {
  /**
   * POST /api/batches' duplicate window (admin-api-config.ts). Default 0 (off): most suites upload
   * the same CSV for many batches on purpose; the duplicate check's own tests turn it on.
   */
  readonly duplicateBatchWindowMinutes?: number;
  /** Body, row and heavy-request caps; default the service's defaults (http/request-limits.ts). */
  readonly requestLimits?: RequestLimits;
  /** The worker's pre-flight check (all-in-one wires the worker's); default none. */
  readonly tenantChecker?: TenantChecker;
  /** GET /api/tenant/changes' source (a simulated tenant's write log); default none. */
  readonly tenantChanges?: TenantChangeSource;
  /** GET /api/worker/pacing's source (the workers of the process); default none. */
  readonly workerPacing?: WorkerPacingSource;
  /** POST /api/purge's policy; default the service's (90 days, scrub). */
  readonly retention?: RetentionConfig;
}

/**
 * Test DNS: `localhost` is loopback, `*.internal.test` a private address, any other name a public
 * one. Registration only resolves (the admin API never connects to a webhook), so nothing is sent.
 */
export const testResolver: Resolver = async (hostname) => {
  if (hostname === "localhost") return [{ address: "127.0.0.1", family: 4 }];
  if (hostname.endsWith(".internal.test")) return [{ address: "10.1.2.3", family: 4 }];
  return [{ address: "93.184.215.14", family: 4 }];
};

export async function startApiHarness(options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const database: TestDatabase = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), "admin-api-test-"));
  const logger = createLogger({ level: "silent", name: "admin-api-test" });
  // The service gets a pool of its own, as in production; concurrency tests need several connections.
  const serviceDb = createDb({ connectionString: database.url, maxConnections: 10 });
  const runtime = await createEmbeddedRuntime({
    connectionString: database.url,
    db: serviceDb,
    logger,
    pollingIntervalSeconds: 0.1,
  });
  const verifier = await createVerifierForConfig({ mode: "local", dataDir, issuer, audience });
  const api: RunningAdminApi = await startAdminApiService({
    db: serviceDb,
    bus: runtime.bus,
    verifier,
    logger,
    dataSources: createDataSourceClient({ env: { [TEST_SOURCE_DB_ENV]: database.url }, baseDir: dataDir }),
    // The embedded runtime started its bus when it was created.
    busReady: Promise.resolve(),
    host: "127.0.0.1",
    port: 0,
    duplicateBatchWindowMinutes: options.duplicateBatchWindowMinutes ?? 0,
    outbound: webhookOutboundPolicyFromEnv({}, testResolver),
    secrets: new SecretKeyring(secretKeyOf(randomBytes(32))),
    ...(options.requestLimits === undefined ? {} : { requestLimits: options.requestLimits }),
    ...(options.tenantChecker === undefined ? {} : { tenantChecker: options.tenantChecker }),
    ...(options.tenantChanges === undefined ? {} : { tenantChanges: options.tenantChanges }),
    ...(options.workerPacing === undefined ? {} : { workerPacing: options.workerPacing }),
    ...(options.retention === undefined ? {} : { retention: options.retention }),
  });
  const token = (role: "Admin" | "Operator" | "Reader") =>
    issueLocalToken({
      dataDir,
      issuer,
      audience,
      roles: [role],
      name: `${role.toLowerCase()}@example.test`,
      ttlSeconds: 600,
    });
  const adminToken = await token("Admin");
  const readerToken = await token("Reader");
  const operatorToken = await token("Operator");

  return {
    db: database.db,
    runtime,
    adminToken,
    readerToken,
    operatorToken,
    dataDir,
    url: api.url,
    async request(method, apiPath, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const bearer = options.token === undefined ? adminToken : options.token;
      if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
      if (options.type !== undefined) headers["content-type"] = options.type;
      const response = await fetch(`${api.url}/api${apiPath}`, { method, headers, body: options.body });
      const text = await response.text();
      return {
        status: response.status,
        body: text === "" ? undefined : JSON.parse(text),
        text,
        headers: response.headers,
      };
    },
    async stop() {
      await api.close();
      await runtime.stop();
      await serviceDb.destroy();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestRunbookOptions {
  readonly name: string;
  /** Worker pool of the init step; no init section when absent. */
  readonly initWorkerId?: string;
  /** Phase names in runbook order, each with one step on `workerId`. */
  readonly phases?: readonly string[];
  readonly workerId?: string;
  /** Phases with `approval: required` (issue 30). */
  readonly gatedPhases?: readonly string[];
}

/** A valid runbook keyed by UserPrincipalName, with ProxyAddresses as a semicolon list. */
export function testRunbookYaml(options: TestRunbookOptions): string {
  const workerId = options.workerId ?? "worker-01";
  const phases = options.phases ?? ["pre-checks", "cutover"];
  const init =
    options.initWorkerId === undefined
      ? ""
      : `init:\n  - name: create-group\n    worker_id: ${options.initWorkerId}\n    function: Test-Echo\n`;
  const phaseYaml = phases
    .map(
      (phase, index) =>
        `  - name: ${phase}\n    offset: T-${phases.length - index}d\n` +
        (options.gatedPhases?.includes(phase) === true ? "    approval: required\n" : "") +
        "    steps:\n" +
        `      - name: ${phase}-step\n        worker_id: ${workerId}\n        function: Test-Echo\n`,
    )
    .join("");
  return (
    `name: ${options.name}\n` +
    "data_source:\n  type: csv\n  path: members.csv\n  primary_key: UserPrincipalName\n" +
    "  batch_time: immediate\n  multi_valued_columns:\n    - name: ProxyAddresses\n      format: semicolon_delimited\n" +
    init +
    `phases:\n${phaseYaml}`
  );
}
