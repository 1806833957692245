/**
 * Polls `/readyz` twice a second and adds up the time it did not answer 200 (a refused or timed
 * out probe counts as not ready: that is what a load balancer sees).
 */
export function watchReadiness(apiUrl: string): { stop(): number } {
  let notReadyMs = 0;
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const started = Date.now();
      let ready = false;
      try {
        ready = (await fetch(`${apiUrl}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200;
      } catch {
        ready = false;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 500 - (Date.now() - started))));
      if (!ready && !stopped) notReadyMs += Date.now() - started;
    }
  };
  void loop();
  return {
    stop() {
      stopped = true;
      return notReadyMs;
    },
  };
}

/** A port for the API and the embedded database (libs/dapr-harness/src/free-port.ts says why not port 0). */
export { freePort } from "@matoolkit/dapr-harness/free-port";
