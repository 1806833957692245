/**
 * Go `time.ParseDuration` syntax ("300ms", "1h30m", "1.5s", "-2m"), which is what Dapr accepts for
 * job `dueTime`/`ttl`/`@every` and failure-policy intervals. Returned in (possibly fractional)
 * milliseconds; nanosecond precision is irrelevant for a test stand-in.
 */

const UNIT_IN_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign, as Go accepts
  μs: 1e-3, // U+03BC Greek mu, as Go accepts
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const COMPONENT = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

export class GoDurationError extends Error {
  constructor(input: string, reason: string) {
    super(`invalid Go duration "${input}": ${reason}`);
    this.name = "GoDurationError";
  }
}

export function parseGoDuration(input: string): number {
  let rest = input;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1;
    rest = rest.slice(1);
  }
  // Go accepts a bare "0" (with or without sign) and nothing else without a unit.
  if (rest === "0") return 0;
  if (rest === "") throw new GoDurationError(input, "empty");

  let totalMs = 0;
  while (rest.length > 0) {
    const match = COMPONENT.exec(rest);
    if (!match)
      throw new GoDurationError(
        input,
        `unexpected "${rest}" (expected <number><unit>, unit one of ns us ms s m h)`,
      );
    const [whole, amount, unit] = match as unknown as [string, string, string];
    totalMs += Number(amount) * (UNIT_IN_MS[unit] ?? Number.NaN);
    rest = rest.slice(whole.length);
  }
  if (!Number.isFinite(totalMs)) throw new GoDurationError(input, "out of range");
  return sign * totalMs;
}

export function isGoDuration(input: string): boolean {
  try {
    parseGoDuration(input);
    return true;
  } catch {
    return false;
  }
}
