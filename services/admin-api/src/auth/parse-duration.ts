const unitSeconds = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** Longest lifetime we will sign: a local token is a bearer credential, keep leaks short-lived. */
export const maxTokenTtlSeconds = 30 * unitSeconds.d;

/** Parses `90`, `90s`, `15m`, `1h` or `7d` into whole seconds; undefined if malformed or out of range. */
export function parseDurationSeconds(text: string): number | undefined {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = (match[2] || "s") as keyof typeof unitSeconds;
  const seconds = Number(match[1]) * unitSeconds[unit];
  return seconds > 0 && seconds <= maxTokenTtlSeconds ? seconds : undefined;
}
