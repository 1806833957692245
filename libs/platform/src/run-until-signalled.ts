/**
 * One Ctrl-C in a terminal reaches us several times within milliseconds: directly (the terminal
 * signals the whole foreground process group) and relayed by `npm` and `tsx`. Copies within this
 * window are the same request; a later signal is a deliberate "stop now".
 */
const REPEATED_SIGNAL_WINDOW_MS = 1500;

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
 * once (a second signal, given deliberately: exit now). Start-up errors print one clear line and
 * exit 1: configuration mistakes fail fast.
 */
export async function runUntilSignalled(
  name: string,
  start: (control: ServiceControl) => Promise<() => Promise<void>>,
): Promise<void> {
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  let stoppingSince = 0;
  /** A shutdown requested while start() still ran: carried out as soon as it returns. */
  let pending: string | undefined;
  const shutdown = async (reason: string, fromSignal: boolean) => {
    if (stopping) {
      if (fromSignal && Date.now() - stoppingSince > REPEATED_SIGNAL_WINDOW_MS) process.exit(1);
      return;
    }
    if (stop === undefined) {
      pending ??= reason;
      return;
    }
    stopping = true;
    stoppingSince = Date.now();
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
  // Other listeners stay: tsx's own (it tells the tsx parent we got the signal; without it the
  // parent re-sends it and then SIGKILLs us mid-shutdown). The embedded database runs in its own
  // session, so a terminal's Ctrl-C reaches only us and the order holds: services, then database.
  process.on("SIGINT", () => void shutdown("SIGINT received", true));
  process.on("SIGTERM", () => void shutdown("SIGTERM received", true));
  process.on("SIGHUP", () => void shutdown("SIGHUP received", true));
  if (pending !== undefined) void shutdown(pending, false);
}
