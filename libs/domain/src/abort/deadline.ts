/**
 * Runs `operation` with a signal that aborts when `parent` aborts or when `timeoutMs` has passed,
 * whichever comes first, and releases the timer and the listener on `parent` when it settles.
 *
 * Why not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: Node holds a timeout signal only
 * weakly, and one referenced only by a composite signal can be garbage-collected before it fires
 * (nodejs/node#57736), so under memory pressure the deadline silently never comes and a request to
 * a silent peer hangs until the job's own timeout. Here the timer closes over a strong reference.
 * The timeout reason is a `TimeoutError` DOMException, as `AbortSignal.timeout` gives.
 */
export async function withDeadline<T>(
  parent: AbortSignal,
  timeoutMs: number,
  operation: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener("abort", onParentAbort, { once: true });
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  try {
    return await operation(controller.signal);
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onParentAbort);
  }
}
