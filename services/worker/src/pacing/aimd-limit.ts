/**
 * An adaptive ceiling (AIMD, as TCP's congestion window): it starts at the cap, a throttled
 * response multiplies it by `decreaseFactor` (never below `floor`), and it climbs back by
 * `increasePerSecond` per second since that decrease, up to the cap. Pure and clock-free: every
 * call names the time, so the value is a function of the throttles seen and of `now`.
 *
 * One storm, one decrease: a 429 for a call sent BEFORE the last decrease is ignored. The calls
 * in flight when the first 429 came back were paced at the old value; their 429s say nothing
 * about the new one, and counting them would halve the value once per call in flight.
 */
export interface AimdSettings {
  /** The configured maximum, and the starting value. */
  readonly cap: number;
  /** The value never goes below this (> 0, ≤ cap). */
  readonly floor: number;
  /** 0 < factor < 1; 0.5 halves the value on a throttled response. */
  readonly decreaseFactor: number;
  /** Added back per second since the last decrease. */
  readonly increasePerSecond: number;
}

export interface AimdLimit {
  readonly settings: AimdSettings;
  /** The ceiling at `now` (ms). */
  current(now: number): number;
  /**
   * A call sent at `sentAt` was throttled, seen at `now`: decreases the value unless that call
   * went out before the last decrease. Returns whether the value went down noticeably (by a
   * tenth or more): at the floor a storm still holds it there and restarts its climb, but the
   * few hundredths it had climbed back are not worth announcing (the worker logs each one).
   */
  throttled(sentAt: number, now: number): boolean;
  /** Decreases so far. */
  readonly decreases: number;
}

export function createAimdLimit(settings: AimdSettings): AimdLimit {
  const { cap, floor, decreaseFactor, increasePerSecond } = settings;
  if (!(cap > 0) || !Number.isFinite(cap))
    throw new RangeError(`cap must be a finite number > 0, got ${cap}`);
  if (!(floor > 0 && floor <= cap))
    throw new RangeError(`floor must be > 0 and ≤ cap (${cap}), got ${floor}`);
  if (!(decreaseFactor > 0 && decreaseFactor < 1))
    throw new RangeError(`decreaseFactor must be between 0 and 1, got ${decreaseFactor}`);
  if (!(increasePerSecond > 0))
    throw new RangeError(`increasePerSecond must be > 0, got ${increasePerSecond}`);

  /** The value right after the last decrease, and when that was; none yet: at the cap. */
  let base = cap;
  let decreasedAt = Number.NEGATIVE_INFINITY;
  let decreases = 0;

  const current = (now: number): number => {
    if (decreasedAt === Number.NEGATIVE_INFINITY) return cap;
    const recovered = (increasePerSecond * Math.max(0, now - decreasedAt)) / 1000;
    return Math.min(cap, base + recovered);
  };

  return {
    settings,
    current,
    throttled(sentAt, now) {
      if (sentAt < decreasedAt) return false;
      const before = current(now);
      base = Math.max(floor, before * decreaseFactor);
      decreasedAt = now;
      decreases++;
      return base <= before * 0.9;
    },
    get decreases() {
      return decreases;
    },
  };
}
