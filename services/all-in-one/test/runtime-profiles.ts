import { freePort } from "@matoolkit/dapr-harness/free-port";
import {
  createStandInBroker,
  startStandInSidecar,
  type StandInBroker,
  type StandInSidecar,
} from "@matoolkit/dapr-stand-in";

/**
 * The runtimes the shared end-to-end scenarios run on: one suite, every adapter set. A profile
 * opens the infrastructure a system needs (nothing for embedded; a stand-in Dapr sidecar and
 * broker for the Dapr ones) and gives the environment `startAll` reads.
 */
export interface RuntimeProfile {
  readonly name: string;
  open(): Promise<OpenedRuntime>;
}

export interface OpenedRuntime {
  /**
   * Environment for the next system start. Dapr: a new sidecar on the same broker (a restarted
   * pod gets a new daprd, which reads the app's subscriptions again); the previous one stops.
   */
  nextStart(): Promise<Record<string, string>>;
  /**
   * After a system stopped: Dapr stops its sidecar too (a stopped pod takes its daprd with it),
   * so the broker keeps what arrives meanwhile instead of retrying a closed app port.
   */
  systemStopped(): Promise<void>;
  /**
   * Messages the broker received on a topic (Dapr: incl. `<topic>-deadletter`), read without
   * taking them from the subscribers; embedded: undefined (no broker).
   */
  brokerMessages(
    topic: string,
  ): Promise<ReadonlyArray<{ readonly cloudEvent: { readonly id: string } }> | undefined>;
  close(): Promise<void>;
}

export const embeddedProfile: RuntimeProfile = {
  name: "embedded",
  open: async () => ({
    nextStart: async () => ({ MATOOLKIT_RUNTIME: "embedded" }),
    systemStopped: async () => undefined,
    brokerMessages: async () => undefined,
    close: async () => undefined,
  }),
};

/**
 * Every port on Dapr through stand-ins that speak Dapr's documented APIs: pub/sub, Jobs and
 * state over HTTP (libs/dapr-stand-in) and, when `workflow` is given, Dapr Workflow over gRPC
 * (the durable-task sidecar protocol, libs/runtime/src/dapr/workflow/testing).
 */
export function daprProfile(
  name: string,
  env: Record<string, string>,
  workflow?: () => Promise<{ port: number; close(): Promise<void> }>,
): RuntimeProfile {
  return {
    name,
    async open() {
      // Redelivery as dapr/resources/resiliency.yaml configures it, roughly: a dozen or more
      // retries over several seconds before Dapr gives up and dead-letters.
      const broker: StandInBroker = createStandInBroker({ redeliveryDelayMs: 200, maxDeliveryAttempts: 50 });
      const workflowSidecar = await workflow?.();
      let sidecar: StandInSidecar | undefined;
      return {
        async nextStart() {
          await sidecar?.stop();
          const appPort = await freePort();
          sidecar = await startStandInSidecar({
            broker,
            appId: "matoolkit",
            appUrl: `http://127.0.0.1:${appPort}`,
            log: () => undefined,
          });
          return {
            ...env,
            DAPR_HTTP_ENDPOINT: sidecar.url,
            MATOOLKIT_DAPR_APP_PORT: String(appPort),
            ...(workflowSidecar === undefined ? {} : { DAPR_GRPC_PORT: String(workflowSidecar.port) }),
          };
        },
        async systemStopped() {
          await sidecar?.stop();
          sidecar = undefined;
        },
        brokerMessages: async (topic) => broker.messages(topic),
        async close() {
          await sidecar?.stop();
          await workflowSidecar?.close();
          broker.close();
        },
      };
    },
  };
}
