import type { Response } from "express";

/**
 * Exchange Online's per-tenant concurrency refusal, besides its clean 429/503 throttling: the
 * admin API answers with a plain-text (not OData JSON) body "You have reached the maximum number
 * of concurrent requests per tenant. Please wait and try again." Clients of the same endpoint
 * recognise it by that text and wait and retry, whatever the HTTP status: GreyCorbel/ExoHelper
 * `Commands/Public/Invoke-ExoCommand.ps1` (`$responseData -notlike 'You have reached the maximum
 * number of concurrent requests per tenant. Please wait and try again*'`). The status that
 * carries it is not documented, so the simulator sends one that says nothing about throttling
 * (400, no Retry-After): only a client that reads the text retries, as on the service.
 */
export const concurrencyRefusalText =
  "You have reached the maximum number of concurrent requests per tenant. Please wait and try again.";

export class ExchangeConcurrencyThrottle {
  readonly #rate: () => number;
  readonly #random: () => number;
  #armed = 0;
  #refused = 0;

  /** `rate`: read at each request (the behaviour can change at run time). */
  constructor(rate: () => number, random: () => number = Math.random) {
    this.#rate = rate;
    this.#random = random;
  }

  /** The next `count` Exchange requests are refused (tests). */
  arm(count: number): void {
    if (!Number.isInteger(count) || count < 1) throw new RangeError("count must be an integer >= 1");
    this.#armed += count;
  }

  /** Called once per Exchange request (after authentication): refuse it? */
  next(): boolean {
    if (this.#armed > 0) {
      this.#armed--;
      this.#refused++;
      return true;
    }
    const rate = this.#rate();
    if (rate > 0 && this.#random() < rate) {
      this.#refused++;
      return true;
    }
    return false;
  }

  /** How many requests were refused so far. */
  get refused(): number {
    return this.#refused;
  }
}

export function sendConcurrencyRefusal(response: Response): void {
  response.status(400).type("text/plain").send(concurrencyRefusalText);
}
