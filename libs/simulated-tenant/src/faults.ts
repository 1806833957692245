/**
 * Throttling as the real services do it: HTTP 429 (or 503) with a `Retry-After` header, either at
 * a steady rate (rehearse a runbook under load) or for the next N requests (deterministic tests).
 */
export type SimulatedApi = "graph" | "exchange";

export interface ThrottleSettings {
  /** Share of requests refused, 0..1. */
  readonly rate: number;
  readonly retryAfterSeconds: number;
  /** Which APIs the rate applies to; both when omitted. */
  readonly apis?: readonly SimulatedApi[];
}

export interface ArmedFault {
  readonly api?: SimulatedApi;
  /** How many of the next matching requests fail. */
  readonly count: number;
  readonly status?: 429 | 503;
  readonly retryAfterSeconds?: number;
}

export interface RequestCounts {
  graph: number;
  exchange: number;
  graphFaults: number;
  exchangeFaults: number;
}

export interface InjectedFault {
  readonly status: 429 | 503;
  readonly retryAfterSeconds: number;
}

export class FaultInjector {
  #throttle: ThrottleSettings;
  readonly #armed: { api?: SimulatedApi; remaining: number; status: 429 | 503; retryAfterSeconds: number }[] =
    [];
  readonly #random: () => number;
  readonly #counts: RequestCounts = { graph: 0, exchange: 0, graphFaults: 0, exchangeFaults: 0 };

  constructor(throttle: ThrottleSettings, random: () => number = Math.random) {
    this.#throttle = validateThrottle(throttle);
    this.#random = random;
  }

  get throttle(): ThrottleSettings {
    return this.#throttle;
  }

  setThrottle(throttle: ThrottleSettings): void {
    this.#throttle = validateThrottle(throttle);
  }

  /** The next `count` requests (to `api`, or to any) fail with `status` and Retry-After. */
  arm(fault: ArmedFault): void {
    if (!Number.isInteger(fault.count) || fault.count < 1)
      throw new RangeError("count must be an integer >= 1");
    this.#armed.push({
      api: fault.api,
      remaining: fault.count,
      status: fault.status ?? 429,
      retryAfterSeconds: fault.retryAfterSeconds ?? 1,
    });
  }

  /** Called once per API request: the fault to answer with, if any. */
  next(api: SimulatedApi): InjectedFault | undefined {
    this.#counts[api]++;
    const armed = this.#armed.find((fault) => fault.api === undefined || fault.api === api);
    if (armed !== undefined) {
      armed.remaining--;
      if (armed.remaining === 0) this.#armed.splice(this.#armed.indexOf(armed), 1);
      this.#counts[`${api}Faults`]++;
      return { status: armed.status, retryAfterSeconds: armed.retryAfterSeconds };
    }
    const { rate, apis, retryAfterSeconds } = this.#throttle;
    if (rate > 0 && (apis === undefined || apis.includes(api)) && this.#random() < rate) {
      this.#counts[`${api}Faults`]++;
      return { status: 429, retryAfterSeconds };
    }
    return undefined;
  }

  /** Requests seen and faults injected per API, for tests and the admin endpoint. */
  counts(): RequestCounts {
    return { ...this.#counts };
  }
}

function validateThrottle(throttle: ThrottleSettings): ThrottleSettings {
  if (!(throttle.rate >= 0 && throttle.rate <= 1))
    throw new RangeError("throttle rate must be between 0 and 1");
  if (!(throttle.retryAfterSeconds >= 0)) throw new RangeError("retryAfterSeconds must be >= 0");
  return throttle;
}
