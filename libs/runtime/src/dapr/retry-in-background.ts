import type { Logger } from "../logger.ts";

/**
 * Keeps trying a call to the sidecar until it succeeds or the process stops, with backoff up to
 * 10 s. Used for start-up registrations (recurring jobs) so a service starts, and reports
 * not-ready, while its sidecar is still coming up, instead of failing its start.
 */
export async function retryInBackground(args: {
  readonly what: string;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly attempt: () => Promise<void>;
}): Promise<void> {
  let delayMs = 200;
  for (let attempt = 1; !args.signal.aborted; attempt += 1) {
    try {
      await args.attempt();
      if (attempt > 1) args.logger.info({ attempts: attempt }, `${args.what}: done`);
      return;
    } catch (error) {
      if (attempt === 1 || attempt % 10 === 0) {
        args.logger.warn({ err: error, attempt }, `${args.what}: failed, retrying`);
      }
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      args.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
    delayMs = Math.min(10_000, delayMs * 2);
  }
}
