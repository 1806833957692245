import type { RequestHandler } from "express";
import { principalOf } from "../auth/index.ts";
import { tooManyInFlight } from "./limit-errors.ts";
import { routeName, type RequestLimits } from "./request-limits.ts";

/**
 * How many heavy requests run at once, per caller (the token's `sub`) and in all: one Operator
 * cannot take every slot, and many callers together cannot exhaust memory. In-process counters:
 * each admin API process bounds its own work (replicas each have their own slots).
 */
export interface HeavyRequestSlots {
  /** Takes a slot for `caller`, or says which limit is full. */
  tryAcquire(
    caller: string,
  ):
    | { readonly ok: true; release(): void }
    | { readonly ok: false; readonly scope: "caller" | "server"; readonly limit: number };
  /** Slots taken now (tests and the bench read it). */
  inFlight(caller?: string): number;
}

export function createHeavyRequestSlots(
  limits: Pick<RequestLimits, "heavyPerCaller" | "heavyTotal">,
): HeavyRequestSlots {
  const byCaller = new Map<string, number>();
  let total = 0;
  return {
    tryAcquire(caller) {
      const mine = byCaller.get(caller) ?? 0;
      if (mine >= limits.heavyPerCaller) return { ok: false, scope: "caller", limit: limits.heavyPerCaller };
      if (total >= limits.heavyTotal) return { ok: false, scope: "server", limit: limits.heavyTotal };
      byCaller.set(caller, mine + 1);
      total += 1;
      let released = false;
      return {
        ok: true,
        release() {
          if (released) return;
          released = true;
          total -= 1;
          const left = (byCaller.get(caller) ?? 1) - 1;
          if (left === 0) byCaller.delete(caller);
          else byCaller.set(caller, left);
        },
      };
    },
    inFlight: (caller) => (caller === undefined ? total : (byCaller.get(caller) ?? 0)),
  };
}

/**
 * A heavy request of this route is not worth retrying sooner: a 20 MB plan takes seconds. Clients
 * (and the CLI) wait this long before trying again.
 */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Middleware after authentication and before the body is read (a refused request costs no
 * parsing): takes a slot or answers 429 with Retry-After. The slot is given back once the
 * response has ended (or the client went away) AND the handler's work has settled: a client that
 * disconnects mid-plan does not free its slot while the server still computes for it.
 */
export function heavyRequestGate(
  operation: { readonly method: string; readonly path: string },
  slots: HeavyRequestSlots,
): RequestHandler {
  const route = routeName(operation);
  return (_req, res, next) => {
    const slot = slots.tryAcquire(principalOf(res).subject);
    if (!slot.ok) {
      res.set("Retry-After", String(RETRY_AFTER_SECONDS));
      return next(tooManyInFlight(slot.scope, slot.limit, route));
    }
    const held: HeldSlot = { working: 0, responseEnded: false, release: slot.release };
    res.locals[HELD_SLOT] = held;
    const ended = () => {
      held.responseEnded = true;
      if (held.working === 0) held.release();
    };
    res.once("finish", ended);
    res.once("close", ended);
    next();
  };
}

/** Wraps the operation's handler so the slot taken by heavyRequestGate outlives its work. */
export function holdingSlot(handler: RequestHandler): RequestHandler {
  return async (req, res, next) => {
    const held = res.locals[HELD_SLOT] as HeldSlot | undefined;
    if (held === undefined) return handler(req, res, next);
    held.working += 1;
    try {
      return await handler(req, res, next);
    } finally {
      held.working -= 1;
      if (held.working === 0 && held.responseEnded) held.release();
    }
  };
}

const HELD_SLOT = "heavyRequestSlot";
interface HeldSlot {
  working: number;
  responseEnded: boolean;
  readonly release: () => void;
}
