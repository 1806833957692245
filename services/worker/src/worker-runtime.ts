import type { TenantChecker } from "@matoolkit/domain";
import type { Logger } from "@matoolkit/runtime";
import { createDiagnosticFunctions } from "./functions/diagnostics.ts";
import type { FunctionRegistry } from "./functions/function-registry.ts";
import {
  createRegistryWithCustomFunctions,
  loadCustomFunctions,
  type CustomFunctionsLoaded,
} from "./functions/load-custom-functions.ts";
import type { FunctionModule } from "./functions/worker-function.ts";
import { createTenantClients, type CreateTenantClientsOptions } from "./tenant/create-tenant-clients.ts";
import { tenantConfigFromEnv, type TenantConfig } from "./tenant/tenant-config.ts";
import type { TenantChangeLog } from "./tenant/simulated-tenant-changes.ts";
import type { TenantClients } from "./tenant/tenant-clients.ts";
import { tenantCheckerFor } from "./tenant/tenant-checker.ts";
import { workerConfigFromEnv, workerEnvVariables, type WorkerConfig } from "./worker-config.ts";

/** Everything a worker needs besides the platform, built once per process. */
export interface WorkerRuntime {
  readonly config: WorkerConfig;
  readonly tenantConfig: TenantConfig;
  /** Diagnostics + the standard library + custom functions. */
  readonly registry: FunctionRegistry;
  readonly tenant: TenantClients;
  /** Safe to log: which tenant and how. */
  readonly tenantDescription: string;
  /** The pre-flight check of this worker's tenant (POST /api/tenant/check, `matoolkit tenant check`). */
  readonly checkTenant: TenantChecker;
  /** A simulated tenant's write log; undefined for no tenant or a real one. */
  readonly tenantChangeLog: TenantChangeLog | undefined;
  readonly customFunctions: CustomFunctionsLoaded | undefined;
  /** For startWorkerService's `idleExitMs`; undefined: never exit when idle. */
  readonly idleExitMs: number | undefined;
  /** Releases the tenant (stops an in-process simulated tenant). Call after the worker stopped. */
  close(): Promise<void>;
}

export interface BuildWorkerRuntimeOptions {
  /** Built-in modules; default: diagnostics plus the standard library. Tests pass their own. */
  readonly builtInFunctions?: () => Promise<readonly FunctionModule[]>;
  readonly tenantClients?: Omit<CreateTenantClientsOptions, "logger">;
}

/**
 * For entry points (the worker's main.ts, all-in-one): reads the worker and tenant variables,
 * fails fast naming the variable at fault, loads the custom functions, builds the tenant
 * credential and clients, and logs what it set up (tenant, custom files and names; never a
 * secret). The tenant comes last, so a failure leaves nothing running.
 */
export async function buildWorkerRuntime(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
  options: BuildWorkerRuntimeOptions = {},
): Promise<WorkerRuntime> {
  const log = logger.child({ component: "worker-runtime" });
  const config = workerConfigFromEnv(env);
  const tenantConfig = tenantConfigFromEnv(env);

  const customFunctions =
    config.functionsDir === undefined ? undefined : await loadCustomFunctions(config.functionsDir);
  if (customFunctions !== undefined) {
    log.info(
      {
        functionsDir: config.functionsDir,
        files: customFunctions.files,
        functions: Object.keys(customFunctions.module),
      },
      `custom functions loaded from ${workerEnvVariables.functionsDir}`,
    );
  }
  const builtIn = await (options.builtInFunctions ?? defaultBuiltInFunctions)();
  const registry = createRegistryWithCustomFunctions(builtIn, customFunctions);

  const tenant = await createTenantClients(tenantConfig, { logger: log, ...options.tenantClients });
  log.info(
    { tenant: tenant.description, functions: registry.names().length },
    `worker target: ${tenant.description}`,
  );

  return {
    config,
    tenantConfig,
    registry,
    tenant: tenant.clients,
    tenantDescription: tenant.description,
    checkTenant: tenantCheckerFor(tenantConfig, tenant.clients, tenant.description),
    tenantChangeLog: tenant.changeLog,
    customFunctions,
    idleExitMs: config.idleExitSeconds === undefined ? undefined : config.idleExitSeconds * 1000,
    close: () => tenant.close(),
  };
}

async function defaultBuiltInFunctions(): Promise<readonly FunctionModule[]> {
  // Loaded here rather than imported at the top, so that `@matoolkit/worker` (which custom
  // functions import for parseFunctionParams and types) does not drag the whole library in.
  const { createStandardLibrary } = await import("./functions/standard-library.ts");
  return [createDiagnosticFunctions(), ...createStandardLibrary()];
}
