import {
  keyVaultAccessFromEnv,
  loadSecretKeyring,
  loadSecretsAtStart,
  reloadOnUnknownKey,
  platformConfigFromEnv,
  unknownWebhookSecretKeyIds,
  secretKeySourceFromEnv,
  webhookOutboundPolicyFromEnv,
  type Platform,
  type ServicePart,
  type StartedService,
} from "@matoolkit/platform";
import { orchestratorConfigFromEnv } from "./orchestrator-config.ts";
import { emailNotifyConfigFromEnv } from "./notifications/email-config.ts";
import { sharedMailGraph, standaloneMailGraph, type MailGraph } from "./notifications/email-graph.ts";
import type { GraphMailClient } from "./notifications/email-notifier.ts";
import { startOrchestratorService } from "./orchestrator-service.ts";

/**
 * The orchestrator as its main.ts and all-in-one start it. Configuration is read here, before any
 * platform is booted: a bad variable fails in milliseconds. It hosts the batch workflows (one
 * orchestrator process per database in embedded mode: the in-process engine does not share
 * instances between processes) and, on Dapr, records the worker pools' dead letters.
 */
export function orchestratorPart(
  env: Record<string, string | undefined>,
  options: {
    /** all-in-one: the process also hosts the admin API (started after this part), so it may create the key. */
    readonly createsSecretsKey?: boolean;
    /**
     * all-in-one: the Graph client of this process's worker (its tenant), for email
     * notifications; absent, a standalone orchestrator builds its own from the tenant variables.
     */
    readonly tenantGraph?: () => GraphMailClient | undefined;
  } = {},
): ServicePart<Platform> {
  const config = orchestratorConfigFromEnv(env);
  // Email notifications (issue 31 item 7), off unless MATOOLKIT_NOTIFY_EMAIL=on.
  const email = emailNotifyConfigFromEnv(env);
  // Webhooks: where deliveries may go, and the key that opens their secrets (read here, once).
  const outbound = webhookOutboundPolicyFromEnv(env);
  const { dataDir, databaseUrl } = platformConfigFromEnv(env);
  const keySource = secretKeySourceFromEnv(env, dataDir);
  // In Key Vault, only read: the admin API creates the key (the orchestrator waits for it).
  const keyVault = keyVaultAccessFromEnv(env, keySource, { mayCreate: options.createsSecretsKey ?? false });
  return {
    name: "orchestrator",
    needs: { sql: true, outboxRelay: true, workerJobDeadLetters: true },
    async start(platform): Promise<StartedService> {
      const secrets = await loadSecretsAtStart(keySource, {
        sharedDatabase: databaseUrl !== undefined,
        logger: platform.logger,
        keyVault,
      });
      // A source that can gain a key while this process runs (a Key Vault version, a mounted
      // file): a value sealed with a key not loaded yet makes it reload (a retried delivery then opens).
      if (keySource.kind === "key-vault" || keySource.kind === "file") {
        const reloadAccess =
          keyVault === undefined ? undefined : { ...keyVault, attempts: 1, logger: platform.logger };
        reloadOnUnknownKey(secrets, () => loadSecretKeyring(keySource, reloadAccess), {
          logger: platform.logger,
        });
      }
      const unknown = await unknownWebhookSecretKeyIds(platform.db, secrets);
      if (unknown.length > 0) {
        platform.logger.error(
          { unknownKeyIds: unknown, keyId: secrets.current.id },
          "webhook secrets sealed with keys this orchestrator does not have: their deliveries fail " +
            "(give it the admin API's secrets key: MATOOLKIT_SECRETS_KEY, MATOOLKIT_SECRETS_KEY_FILE or " +
            "MATOOLKIT_SECRETS_KEYVAULT_URL)",
        );
      }
      let mailGraph: MailGraph | undefined;
      if (email.enabled) {
        mailGraph =
          options.tenantGraph === undefined
            ? await standaloneMailGraph(env, platform.logger)
            : sharedMailGraph(options.tenantGraph);
        platform.logger.info(
          { recipients: email.to.length, tenant: mailGraph.description },
          "email notifications on: batch ends and approval requests are mailed through Graph sendMail",
        );
      }
      const orchestrator = await startOrchestratorService({
        db: platform.db,
        bus: platform.bus,
        logger: platform.logger,
        secrets,
        notifier: { outbound },
        ...(email.enabled && mailGraph !== undefined
          ? { mail: { from: email.from, to: email.to, graph: mailGraph.graph } }
          : {}),
        concurrency: config.concurrency,
        phaseStartWindow: config.phaseStartWindow,
        workflows: {
          engine: platform.workflows,
          recheckSeconds: config.workflowRecheckSeconds,
          reconcileSeconds: config.workflowReconcileSeconds,
        },
      });
      return {
        // Up to Dapr 1.17 the sidecar answers workflow calls only once the app port is open.
        afterPlatformStart: async () => {
          await orchestrator.startWorkflows();
          platform.logger.info("orchestrator consuming orchestrator-events and worker-results");
        },
        stop: async () => {
          await orchestrator.stop();
          await mailGraph?.close();
        },
      };
    },
  };
}
