import { createRequire } from "node:module";
import type * as Grpc from "@grpc/grpc-js";
import type {
  ActivityWorkItem,
  InMemoryOrchestrationBackend as Backend,
  OrchestrationInstance,
} from "@microsoft/durabletask-js/dist/testing/in-memory-backend.js";
import type * as DaprPbModule from "@dapr/dapr/workflow/internal/durabletask/proto/orchestrator_service_pb.js";
import type * as MsPbModule from "@microsoft/durabletask-js/dist/proto/orchestrator_service_pb.js";
import type * as WrappersModule from "google-protobuf/google/protobuf/wrappers_pb.js";
import type * as TimestampModule from "google-protobuf/google/protobuf/timestamp_pb.js";
import type * as EmptyModule from "google-protobuf/google/protobuf/empty_pb.js";
import { loadDaprWorkflowSdk } from "../../../src/dapr/workflow/dapr-workflow-sdk.ts";
import { appPortActorsGate, openActorsGate, type ActorsGate } from "./actors-gate.ts";

/**
 * A STAND-IN FOR THE DAPR SIDECAR'S WORKFLOW API, for tests only: a gRPC server speaking the
 * durable-task TaskHubSidecarService protocol that daprd serves on its gRPC port, so Dapr's own
 * WorkflowRuntime and DaprWorkflowClient run unmodified against it. The workflow state machine
 * behind it is durabletask-js's in-memory backend (the embedded engine's), not daprd's actor-based
 * engine; the instance-id rules and the waits of its lifecycle calls are modelled on daprd's
 * (1.16–1.18: see startInstance and `waitFor` below), its start-up order on 1.18's unless
 * `appPortBeforeActors` asks for 1.17's.
 */
export interface TaskHubSidecarStandIn {
  readonly port: number;
  /**
   * A new daprd in front of the same workflow state (a restarted pod). With `appPortBeforeActors`
   * every workflow call waits again, until `appPort` accepts a connection.
   */
  sidecarRestarted(appPort: number): void;
  /** Workflow calls waiting for the app's port right now (`appPortBeforeActors`). */
  readonly callsWaitingForApp: number;
  close(): Promise<void>;
}

export interface TaskHubSidecarStandInOptions {
  /** Port to listen on; any free one when absent. */
  readonly port?: number;
  /** When set, every call must carry it as `dapr-api-token` metadata, as daprd requires. */
  readonly apiToken?: string;
  /**
   * daprd ≤1.17's start-up order (see actors-gate.ts): every workflow call but Hello waits, with
   * no deadline, until the app's port accepts a TCP connection. `appPort` may be left out and
   * named later with `sidecarRestarted` (an app whose port is chosen when it starts).
   */
  readonly appPortBeforeActors?: { readonly appHost?: string; readonly appPort?: number };
}

const require = createRequire(import.meta.url);
// Dapr's protobuf copy must be the one serving (see dapr-workflow-sdk.ts) before messages are built.
loadDaprWorkflowSdk();
const grpcPbPath =
  require.resolve("@dapr/dapr/workflow/internal/durabletask/proto/orchestrator_service_grpc_pb.js");
// The same @grpc/grpc-js and google-protobuf instances Dapr's generated service code uses.
const fromDapr = createRequire(grpcPbPath);
const grpc = fromDapr("@grpc/grpc-js") as typeof Grpc;
const { TaskHubSidecarServiceService } = fromDapr(grpcPbPath) as {
  TaskHubSidecarServiceService: Grpc.ServiceDefinition;
};
const pb = fromDapr("./orchestrator_service_pb.js") as typeof DaprPbModule;
const { StringValue } = fromDapr("google-protobuf/google/protobuf/wrappers_pb.js") as typeof WrappersModule;
const { Timestamp } = fromDapr("google-protobuf/google/protobuf/timestamp_pb.js") as typeof TimestampModule;
const { Empty } = fromDapr("google-protobuf/google/protobuf/empty_pb.js") as typeof EmptyModule;
const msPb = require("@microsoft/durabletask-js/dist/proto/orchestrator_service_pb.js") as typeof MsPbModule;
const { InMemoryOrchestrationBackend } =
  require("@microsoft/durabletask-js/dist/testing/in-memory-backend.js") as {
    InMemoryOrchestrationBackend: new () => Backend;
  };

const TERMINAL = new Set<number>([
  pb.OrchestrationStatus.ORCHESTRATION_STATUS_COMPLETED,
  pb.OrchestrationStatus.ORCHESTRATION_STATUS_FAILED,
  pb.OrchestrationStatus.ORCHESTRATION_STATUS_TERMINATED,
]);

/**
 * The same message as the other package's class. The backend builds durabletask-js messages and
 * the gRPC service (de)serialises Dapr's; the two generated copies differ in fields (neither can
 * serialise the other's objects), but share field numbers, so one's data array is the other's.
 */
function asMessage<T>(Target: new (data: unknown[]) => T, message: { toArray(): unknown[] }): T {
  return new Target(message.toArray());
}

class StatusError extends Error {
  constructor(
    readonly code: Grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export async function startTaskHubSidecarStandIn(
  options: TaskHubSidecarStandInOptions = {},
): Promise<TaskHubSidecarStandIn> {
  const backend = new InMemoryOrchestrationBackend();
  const server = new grpc.Server();
  const gate: ActorsGate =
    options.appPortBeforeActors === undefined
      ? openActorsGate
      : appPortActorsGate({
          appHost: options.appPortBeforeActors.appHost ?? "127.0.0.1",
          appPort: options.appPortBeforeActors.appPort,
        });
  /** Aborts every call still waiting (for actors or for a state) when the stand-in closes. */
  const closing = new AbortController();
  /** The orchestration the worker is executing (daprd runs one work item per instance at a time). */
  let executing: { instanceId: string; token: number; newEvents: number; stream: number } | undefined;
  /**
   * Activities handed to a worker stream and not completed yet. When that stream goes away (the
   * app stopped or crashed) daprd hands its unfinished work items to the next worker; so do we,
   * or a restarted app would wait forever for work given to the one that died.
   */
  const activitiesInFlight = new Map<string, { stream: number; item: ActivityWorkItem }>();
  const activityKey = (instanceId: string, taskId: number) => `${instanceId}#${taskId}`;
  let nextStream = 1;
  let closed = false;

  function abandonStream(stream: number): void {
    if (executing?.stream === stream) {
      const { instanceId } = executing;
      executing = undefined;
      const internals = backend as unknown as {
        orchestrationQueueSet: Set<string>;
        enqueueOrchestration(id: string): void;
      };
      if (!internals.orchestrationQueueSet.has(instanceId)) internals.enqueueOrchestration(instanceId);
    }
    for (const [key, entry] of activitiesInFlight) {
      if (entry.stream !== stream) continue;
      activitiesInFlight.delete(key);
      (backend as unknown as { activityQueue: ActivityWorkItem[] }).activityQueue.push(entry.item);
    }
  }

  const authorised = (metadata: Grpc.Metadata) =>
    options.apiToken === undefined || metadata.get("dapr-api-token")[0] === options.apiToken;

  /** Aborts when the caller cancels the call or the stand-in closes: what bounds daprd's waits. */
  function callSignal(call: { on(event: "cancelled", listener: () => void): unknown }): AbortSignal {
    const cancelled = new AbortController();
    call.on("cancelled", () => cancelled.abort(new StatusError(grpc.status.CANCELLED, "call cancelled")));
    return AbortSignal.any([cancelled.signal, closing.signal]);
  }

  /** A workflow call: authorised, then (daprd ≤1.17) held until actors are up, then handled. */
  function unary<Req, Res>(
    handle: (request: Req, signal: AbortSignal) => Res | Promise<Res>,
    { needsActors = true } = {},
  ): Grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      if (!authorised(call.metadata)) {
        callback({ code: grpc.status.UNAUTHENTICATED, details: "missing or wrong dapr-api-token" });
        return;
      }
      const signal = callSignal(call);
      void (async () => {
        if (needsActors) await gate.passed(signal);
        return handle(call.request, signal);
      })().then(
        (response) => callback(null, response),
        (error: unknown) => {
          const code = error instanceof StatusError ? error.code : grpc.status.UNKNOWN;
          callback({ code, details: error instanceof Error ? error.message : String(error) });
        },
      );
    };
  }

  /**
   * durabletask-go's grpcExecutor answers StartInstance, TerminateInstance, SuspendInstance and
   * ResumeInstance only once the instance reached the resulting state (`waitForInstance`, bounded
   * by the caller's context alone): started = no longer pending, terminated = ended, suspended =
   * suspended or ended, resumed = running or ended. So with no worker processing the instance,
   * these calls do not return.
   */
  async function waitFor(
    instanceId: string,
    reached: (status: number) => boolean,
    signal: AbortSignal,
  ): Promise<void> {
    for (;;) {
      const instance = backend.getInstance(instanceId);
      // Purged meanwhile: durabletask-go answers "exists: false" and returns.
      if (instance === undefined || reached(instance.status)) return;
      signal.throwIfAborted();
      await new Promise((resolveTick) => setTimeout(resolveTick, 5));
    }
  }

  function existing(instanceId: string): OrchestrationInstance {
    const instance = backend.getInstance(instanceId);
    if (instance === undefined) throw new StatusError(grpc.status.NOT_FOUND, "no such instance exists");
    return instance;
  }

  function dispatchNext(stream: number): DaprPbModule.WorkItem | undefined {
    if (executing === undefined) {
      const instance = backend.getNextOrchestrationWorkItem();
      if (instance !== undefined) {
        const newEvents = instance.pendingEvents.slice();
        executing = {
          instanceId: instance.instanceId,
          token: instance.completionToken,
          newEvents: newEvents.length,
          stream,
        };
        const request = new pb.OrchestratorRequest();
        request.setInstanceid(instance.instanceId);
        request.setPasteventsList(instance.history.map((event) => asMessage(pb.HistoryEvent, event)));
        request.setNeweventsList(newEvents.map((event) => asMessage(pb.HistoryEvent, event)));
        return new pb.WorkItem().setOrchestratorrequest(request);
      }
    }
    const activity: ActivityWorkItem | undefined = backend.getNextActivityWorkItem();
    if (activity === undefined) return undefined;
    activitiesInFlight.set(activityKey(activity.instanceId, activity.taskId), { stream, item: activity });
    const request = new pb.ActivityRequest();
    request.setName(activity.name);
    request.setTaskid(activity.taskId);
    request.setOrchestrationinstance(new pb.OrchestrationInstance().setInstanceid(activity.instanceId));
    if (activity.input !== undefined) request.setInput(new StringValue().setValue(activity.input));
    return new pb.WorkItem().setActivityrequest(request);
  }

  server.addService(TaskHubSidecarServiceService, {
    // durabletask-go answers Hello itself, without the actor runtime.
    hello: unary(() => new Empty(), { needsActors: false }),

    startInstance: unary(async (request: DaprPbModule.CreateInstanceRequest, signal) => {
      const instanceId = request.getInstanceid();
      const instance = backend.getInstance(instanceId);
      if (instance !== undefined) {
        // daprd 1.16–1.18.3 (orchestrator/create.go `createIfCompleted`): an active id is refused,
        // an ended one is recreated with fresh history. Refusing ended ids too needs
        // `enforceUniqueInstanceId`, which no released daprd reads and SDK 3.18 never sends.
        // The refusal as up to 1.18.1 (the compose file's 1.16.9) words it: a plain error that
        // gRPC answers as UNKNOWN; 1.18.2+ answer ALREADY_EXISTS with the same text.
        if (!TERMINAL.has(instance.status)) {
          throw new StatusError(
            grpc.status.UNKNOWN,
            `failed to create workflow instance: an active workflow with ID '${instanceId}' already exists`,
          );
        }
        backend.purge(instanceId);
      }
      backend.createInstance(instanceId, request.getName(), request.getInput()?.getValue());
      // No scheduled start time is sent by our adapter: wait for the first step, as daprd does.
      if (request.getScheduledstarttimestamp() === undefined) {
        const pending = pb.OrchestrationStatus.ORCHESTRATION_STATUS_PENDING;
        await waitFor(instanceId, (status) => status !== pending, signal);
      }
      return new pb.CreateInstanceResponse().setInstanceid(instanceId);
    }),

    getInstance: unary((request: DaprPbModule.GetInstanceRequest) => {
      const instance = backend.getInstance(request.getInstanceid());
      const response = new pb.GetInstanceResponse().setExists(instance !== undefined);
      if (instance === undefined) return response;
      const state = new pb.OrchestrationState()
        .setInstanceid(instance.instanceId)
        .setName(instance.name)
        .setOrchestrationstatus(instance.status)
        .setCreatedtimestamp(Timestamp.fromDate(instance.createdAt))
        .setLastupdatedtimestamp(Timestamp.fromDate(instance.lastUpdatedAt));
      return response.setOrchestrationstate(state);
    }),

    raiseEvent: unary((request: DaprPbModule.RaiseEventRequest) => {
      existing(request.getInstanceid());
      backend.raiseEvent(request.getInstanceid(), request.getName(), request.getInput()?.getValue());
      return new pb.RaiseEventResponse();
    }),

    terminateInstance: unary(async (request: DaprPbModule.TerminateRequest, signal) => {
      existing(request.getInstanceid());
      backend.terminate(request.getInstanceid(), request.getOutput()?.getValue());
      await waitFor(request.getInstanceid(), (status) => TERMINAL.has(status), signal);
      return new pb.TerminateResponse();
    }),

    suspendInstance: unary(async (request: DaprPbModule.SuspendRequest, signal) => {
      existing(request.getInstanceid());
      backend.suspend(request.getInstanceid());
      const suspended = pb.OrchestrationStatus.ORCHESTRATION_STATUS_SUSPENDED;
      await waitFor(request.getInstanceid(), (s) => s === suspended || TERMINAL.has(s), signal);
      return new pb.SuspendResponse();
    }),

    resumeInstance: unary(async (request: DaprPbModule.ResumeRequest, signal) => {
      existing(request.getInstanceid());
      backend.resume(request.getInstanceid());
      const running = pb.OrchestrationStatus.ORCHESTRATION_STATUS_RUNNING;
      await waitFor(request.getInstanceid(), (s) => s === running || TERMINAL.has(s), signal);
      return new pb.ResumeResponse();
    }),

    purgeInstances: unary((request: DaprPbModule.PurgeInstancesRequest) => {
      // Like daprd: only instances that ended are purged.
      const purged = backend.purge(request.getInstanceid());
      return new pb.PurgeInstancesResponse().setDeletedinstancecount(purged ? 1 : 0);
    }),

    getWorkItems: (call: Grpc.ServerWritableStream<unknown, DaprPbModule.WorkItem>) => {
      if (!authorised(call.metadata)) {
        call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "missing or wrong dapr-api-token" });
        return;
      }
      let open = true;
      const stream = nextStream++;
      const leave = () => {
        if (!open) return;
        open = false;
        abandonStream(stream);
      };
      call.on("cancelled", leave);
      call.on("close", leave);
      call.on("error", leave);
      const signal = callSignal(call);
      void (async () => {
        // daprd registers the workflow actors when a worker connects: that waits for actors too.
        const admitted = await gate.passed(signal).then(
          () => true,
          () => false,
        );
        while (admitted && open && !closed) {
          const item = dispatchNext(stream);
          if (item !== undefined) call.write(item);
          else await new Promise((resolveIdle) => setTimeout(resolveIdle, 5));
        }
        if (!closed) call.end();
      })();
    },

    completeOrchestratorTask: unary((response: DaprPbModule.OrchestratorResponse) => {
      const done = executing;
      executing = undefined;
      const instance = backend.getInstance(response.getInstanceid());
      if (done === undefined || instance === undefined || done.instanceId !== instance.instanceId) {
        return new pb.CompleteTaskResponse();
      }
      // Events that arrived while the worker ran are not answered by this reply: the backend
      // would file them into history unexecuted, so they wait for the next work item instead.
      const late = instance.pendingEvents.splice(done.newEvents);
      backend.completeOrchestration(
        instance.instanceId,
        done.token,
        response.getActionsList().map((action) => asMessage(msPb.OrchestratorAction, action)),
        response.getCustomstatus()?.getValue(),
      );
      if (late.length > 0 && !TERMINAL.has(instance.status)) {
        instance.pendingEvents.push(...late);
        // The backend has no public way to queue an instance without adding an event.
        (backend as unknown as { enqueueOrchestration(id: string): void }).enqueueOrchestration(
          instance.instanceId,
        );
      }
      return new pb.CompleteTaskResponse();
    }),

    completeActivityTask: unary((response: DaprPbModule.ActivityResponse) => {
      activitiesInFlight.delete(activityKey(response.getInstanceid(), response.getTaskid()));
      const failure = response.getFailuredetails();
      backend.completeActivity(
        response.getInstanceid(),
        response.getTaskid(),
        response.getResult()?.getValue() || undefined,
        failure === undefined ? undefined : new Error(failure.getErrormessage()),
      );
      return new pb.CompleteTaskResponse();
    }),
  });

  const port = await new Promise<number>((resolvePort, reject) =>
    server.bindAsync(
      `127.0.0.1:${options.port ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (error, boundPort) => (error === null ? resolvePort(boundPort) : reject(error)),
    ),
  );

  return {
    port,
    sidecarRestarted: (appPort) => gate.restart(appPort),
    get callsWaitingForApp() {
      return gate.waiting;
    },
    async close() {
      closed = true;
      gate.close();
      closing.abort(new StatusError(grpc.status.UNAVAILABLE, "sidecar stopped"));
      server.forceShutdown();
      backend.reset();
    },
  };
}
