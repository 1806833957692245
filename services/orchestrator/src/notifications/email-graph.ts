import { NonRetriableError, reasonCodes } from "@matoolkit/domain";
import type { Logger } from "@matoolkit/runtime";
import { emailNotifyEnv } from "./email-config.ts";
import type { GraphMailClient } from "./email-notifier.ts";

/**
 * The Graph client email notifications send through: the target tenant's, built as the worker
 * builds its own (same variables, same credential, same simulated tenant), since the sender is a
 * mailbox of that tenant and Mail.Send is granted to the tenant's app.
 */
export interface MailGraph {
  readonly graph: GraphMailClient;
  readonly description: string;
  close(): Promise<void>;
}

/**
 * all-in-one: the worker of this process has the tenant's client (and, in a rehearsal, the
 * in-process simulated tenant whose mail `tenant changes` shows); it starts after the
 * orchestrator, so the client is looked up at each send.
 */
export function sharedMailGraph(current: () => GraphMailClient | undefined): MailGraph {
  return {
    graph: {
      request: async (request, signal) => {
        const graph = current();
        if (graph === undefined) {
          throw new NonRetriableError(
            reasonCodes.tenantNotConfigured,
            "The worker of this process has not started",
          );
        }
        return graph.request(request, signal);
      },
    },
    description: "the worker's tenant",
    close: async () => {},
  };
}

/**
 * A standalone orchestrator: its own client from the worker's tenant variables
 * (MATOOLKIT_TENANT…). A simulated tenant must be a shared one (MATOOLKIT_SIMULATED_TENANT_URL):
 * an in-process simulator of its own would be a different tenant from the worker's.
 */
export async function standaloneMailGraph(
  env: Record<string, string | undefined>,
  logger: Logger,
): Promise<MailGraph> {
  // Loaded only when email is on: the worker package brings the Graph SDK and Azure identity.
  const { createTenantClients, tenantConfigFromEnv, tenantEnvVariables } = await import("@matoolkit/worker");
  const config = tenantConfigFromEnv(env);
  if (config.mode === "none") {
    throw new Error(
      `${emailNotifyEnv.enabled}=on needs the target tenant: set ${tenantEnvVariables.mode} (and its credentials) for the orchestrator as for the worker`,
    );
  }
  if (config.mode === "simulated" && config.url === undefined) {
    throw new Error(
      `${emailNotifyEnv.enabled}=on with a simulated tenant needs ${tenantEnvVariables.simulatedUrl} (the worker's shared simulator) in the orchestrator`,
    );
  }
  const built = await createTenantClients(config, { logger });
  return { graph: built.clients.graph, description: built.description, close: () => built.close() };
}
