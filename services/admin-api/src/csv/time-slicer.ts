import { performance } from "node:perf_hooks";

/**
 * Long CPU work (parsing a 20 MB CSV, planning 100,000 members) run in slices: after `sliceMs`
 * of work the caller awaits `pause()`, which lets the event loop run timers and I/O (health
 * probes, other requests, and in `npm start` the orchestrator and the worker, which share this
 * loop). setImmediate, not a promise: microtasks and nextTick run before I/O, so only a macrotask
 * lets a waiting socket be served. One heap, nothing copied, and it works the same bundled or not
 * (a worker_threads pool would copy the text and the members across and need an entry file of
 * its own in the bundle).
 *
 * The budget is the loop's, not each request's: with one slice per request, three uploads resumed
 * in the same loop turn held it for three slices (30 ms) before a probe got its turn. Paused work
 * waits in one queue and each loop turn resumes one of them (the longest waiting), so the loop's
 * other work waits about one slice whatever the number of heavy requests.
 */
export interface TimeSlicer {
  /** Yields to the event loop when the current slice has used its time; cheap otherwise. */
  pause(): Promise<void> | undefined;
}

/** 10 ms: the loop's other work waits at most about that long for a turn. */
export const DEFAULT_SLICE_MS = 10;

/**
 * A slicer of its own (its own queue and budget): tests, and work that must not share the
 * process's budget. Request handlers use `loopSlicer`.
 */
export function createTimeSlicer(sliceMs = DEFAULT_SLICE_MS): TimeSlicer {
  let sliceStart = performance.now();
  const waiting: (() => void)[] = [];
  let turnScheduled = false;
  const turn = () => {
    turnScheduled = false;
    sliceStart = performance.now();
    waiting.shift()?.();
    // The others go on in the next turns, even if the one resumed now never pauses again.
    if (waiting.length > 0) scheduleTurn();
  };
  const scheduleTurn = () => {
    if (turnScheduled) return;
    turnScheduled = true;
    setImmediate(turn);
  };
  return {
    pause() {
      if (performance.now() - sliceStart < sliceMs) return undefined;
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        scheduleTurn();
      });
    },
  };
}

/** The process's slicer: every heavy request's slices share the one event loop's budget. */
export const loopSlicer: TimeSlicer = createTimeSlicer();
