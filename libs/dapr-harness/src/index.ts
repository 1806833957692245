export * from "./dapr-pins.ts";
export * from "./dapr-cache.ts";
export { installDapr, type InstallDaprOptions } from "./install-dapr.ts";
export { freePort, freePorts } from "./free-port.ts";
export { startManagedProcess, waitUntilReady, httpAnswers, type ManagedProcess } from "./managed-process.ts";
export { startDaprControlPlane, type DaprControlPlane } from "./control-plane.ts";
export { startDaprd, type Daprd, type DaprdOptions } from "./daprd.ts";
export { startRedisServer, type HarnessRedis } from "./redis-server.ts";
export { renderDaprResources, renderDaprConfiguration, type MetadataOverrides } from "./render-resources.ts";
export { redisStreamsView, rabbitMqView, type BrokerView, type BrokerCopy } from "./broker-view.ts";
export { createRabbitMqVhost, type RabbitMqVhost } from "./rabbitmq-vhost.ts";
export { requireRuntimeBinaries } from "./require-binaries.ts";
export { openRealSidecar, repoRoot, type RealSidecarFixture } from "./real-sidecar-fixture.ts";
export {
  slimRuntimeLayout,
  installSlimRuntime,
  startSlimControlPlane,
  stopSlimControlPlane,
  slimControlPlanePorts,
  type SlimRuntimeLayout,
} from "./slim-runtime.ts";
export { goawsRecipe, goawsBinary, startGoaws, GOAWS_ACCOUNT_ID, type HarnessGoaws } from "./goaws.ts";
export { startDynalite, type HarnessDynalite } from "./dynalite.ts";
export { awsRequest, EMULATOR_CREDENTIALS } from "./aws-signed-request.ts";
export {
  startAwsEmulators,
  AWS_PROFILE_REGION,
  AWS_PROFILE_TABLE,
  type AwsEmulators,
} from "./aws-emulators.ts";
export { snsSqsView } from "./sns-spy.ts";
export { createNatsStreams, type NatsStreams } from "./nats-streams.ts";
export { natsView } from "./nats-view.ts";
export { openMqttRun, type MqttRun } from "./mqtt-session.ts";
