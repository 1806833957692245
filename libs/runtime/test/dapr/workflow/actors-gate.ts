import { connect } from "node:net";

/**
 * When the stand-in's "actors" are up, modelled on daprd's start-up order.
 *
 * daprd up to 1.17 (pkg/runtime/runtime.go `initRuntime`) serves its gRPC API first, then blocks
 * in `blockUntilAppIsReady` (a TCP dial of the app port every 100 ms, no deadline) and only then
 * initialises actors. Every workflow call goes through the actor runtime (`actors.State`/`Table`/
 * `Router` → `waitForReady`, bounded only by the caller's context, which Dapr's SDK never sets),
 * so until the app's port accepts a connection each call simply waits. 1.18 initialises actors
 * before it waits for the app: calls are answered at once (the gate is open from the start).
 */
export interface ActorsGate {
  /** Resolves once actors are up; rejects when `signal` aborts first (the caller went away). */
  passed(signal: AbortSignal): Promise<void>;
  /** A new daprd process (a restarted pod): actors wait for the app's port again. */
  restart(appPort: number | undefined): void;
  /** Calls waiting for actors right now (tests wait on it instead of sleeping). */
  readonly waiting: number;
  close(): void;
}

export interface ActorsGateOptions {
  readonly appHost: string;
  /** The app port daprd dials; undefined: not known yet (calls wait until `restart` names it). */
  readonly appPort: number | undefined;
  readonly pollIntervalMs?: number;
}

/** daprd ≥1.18 order: nothing waits. */
export const openActorsGate: ActorsGate = {
  passed: async () => undefined,
  restart: () => undefined,
  waiting: 0,
  close: () => undefined,
};

export function appPortActorsGate(options: ActorsGateOptions): ActorsGate {
  const pollIntervalMs = options.pollIntervalMs ?? 25;
  let appPort = options.appPort;
  let ready = false;
  let closed = false;
  let generation = 0;
  let waiting = 0;
  let timer: NodeJS.Timeout | undefined;
  const waiters = new Set<() => void>();

  const poll = (mine: number) => {
    timer = undefined;
    if (closed || mine !== generation) return;
    if (appPort === undefined) return; // restart() names the port and polls again
    const socket = connect({ host: options.appHost, port: appPort });
    const retry = () => {
      socket.destroy();
      if (!closed && mine === generation) timer = setTimeout(() => poll(mine), pollIntervalMs);
    };
    socket.once("error", retry);
    socket.once("connect", () => {
      socket.destroy();
      if (closed || mine !== generation) return;
      ready = true;
      for (const wake of waiters) wake();
      waiters.clear();
    });
  };

  const restart = (port: number | undefined) => {
    generation += 1;
    appPort = port;
    ready = false;
    if (timer !== undefined) clearTimeout(timer);
    poll(generation);
  };
  restart(appPort);

  return {
    passed(signal) {
      if (ready) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        waiting += 1;
        const done = () => {
          waiting -= 1;
          waiters.delete(wake);
          signal.removeEventListener("abort", abort);
        };
        const wake = () => {
          done();
          resolve();
        };
        const abort = () => {
          done();
          reject(signal.reason);
        };
        waiters.add(wake);
        signal.addEventListener("abort", abort, { once: true });
      });
    },
    restart,
    get waiting() {
      return waiting;
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
