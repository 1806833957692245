import { malformedIdPrefix } from "./messages-catalogue.ts";

/**
 * What the system's JSON log (pino, one object a line) says about the drill: error-level lines
 * (a handler that failed on something other than the message itself), uncaught exceptions, and
 * how many times the services started (more than once: the process died or restarted itself).
 */
export interface SystemLogFindings {
  readonly errors: number;
  readonly uncaught: number;
  readonly starts: number;
  /** Drill messages (id prefix) delivered more than once: a retriable failure, not dead-lettered at once. */
  readonly redelivered: number;
  readonly maxDeliveries: number;
  /** A few distinct error messages, for the drill's progress output. */
  readonly errorSamples: readonly string[];
}

export function systemLogFindings(text: string): SystemLogFindings {
  let errors = 0;
  let uncaught = 0;
  let starts = 0;
  const samples = new Set<string>();
  const deliveries = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (/uncaught|unhandled/iu.test(line)) uncaught++;
    let entry:
      | {
          level?: number;
          msg?: string;
          err?: { message?: string };
          messageId?: string;
          deliveryCount?: number;
        }
      | undefined;
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // npm/tsx output, not a log line
    }
    if (entry?.msg === "worker subscribed") starts++;
    if (entry?.messageId?.startsWith(malformedIdPrefix) === true && entry.deliveryCount !== undefined) {
      deliveries.set(entry.messageId, Math.max(deliveries.get(entry.messageId) ?? 0, entry.deliveryCount));
    }
    if ((entry?.level ?? 0) >= 50) {
      errors++;
      if (samples.size < 5) samples.add(`${entry?.msg ?? ""}: ${entry?.err?.message ?? ""}`.slice(0, 160));
    }
  }
  const counts = [...deliveries.values()];
  return {
    errors,
    uncaught,
    starts,
    redelivered: counts.filter((count) => count > 1).length,
    maxDeliveries: Math.max(0, ...counts),
    errorSamples: [...samples],
  };
}
