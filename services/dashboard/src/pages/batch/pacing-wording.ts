import type { AdaptiveLimit, WorkerPacing } from "./pacing-api.ts";

/** One worker pool's line of the indicator. */
export interface PacingLine {
  readonly workerId: string;
  /** e.g. "4.9 starts/s · limit 10 of 20/s, lowered: the tenant throttles · 3 waiting". */
  readonly starts: string;
  /** e.g. "Graph 3 of 8 at once · Exchange 1 at once". */
  readonly calls: string;
  /** A limit is below its cap: the tenant has been throttling. */
  readonly lowered: boolean;
}

const apiNames = { graph: "Graph", exchange: "Exchange" } as const;
const round = (value: number) => (value >= 10 ? value.toFixed(0) : value.toFixed(1).replace(/\.0$/, ""));
// A limit a hair under its cap is still climbing back after a storm, yet reads as the cap.
const isLowered = (limit: AdaptiveLimit | null) => limit !== null && limit.current < limit.cap - 1e-9;

/**
 * The indicator's wording. The observed start rate comes from two readings in a row (the page
 * reads every 2 s): jobs started between them per second; none before the second reading.
 */
export function pacingLines(previous: WorkerPacing | undefined, current: WorkerPacing): PacingLine[] {
  const seconds = previous === undefined ? 0 : (Date.parse(current.at) - Date.parse(previous.at)) / 1000;
  return current.workers.map((worker) => {
    const before = previous?.workers.find((w) => w.workerId === worker.workerId);
    const observed =
      before === undefined || seconds <= 0
        ? undefined
        : Math.max(0, worker.jobStarts - before.jobStarts) / seconds;
    const rate = worker.startRate;
    const starts = [
      observed === undefined ? `${worker.jobStarts} jobs started` : `${round(observed)} starts/s`,
      rate === null
        ? "not paced"
        : isLowered(rate)
          ? `limit ${round(rate.current)} of ${round(rate.cap)}/s, lowered: the tenant throttles`
          : `limit ${round(rate.cap)}/s`,
      ...(worker.waitingToStart > 0 ? [`${worker.waitingToStart} waiting`] : []),
    ].join(" · ");
    const calls = worker.apis
      .map(({ api, inFlight, limit }) =>
        limit === null
          ? `${apiNames[api]} ${inFlight} at once`
          : `${apiNames[api]} ${inFlight} of ${Math.max(1, Math.floor(limit.current))}${isLowered(limit) ? ` (cap ${limit.cap})` : ""} at once`,
      )
      .join(" · ");
    return {
      workerId: worker.workerId,
      starts,
      calls,
      lowered: isLowered(rate) || worker.apis.some(({ limit }) => isLowered(limit)),
    };
  });
}
