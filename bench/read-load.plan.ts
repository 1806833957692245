import { z } from "zod";

/** What bench/read-load.ts is given (one JSON argument) and what it prints (one JSON line). */
export const loadPlanSchema = z.object({
  /** The API's origin, e.g. http://127.0.0.1:41234 */
  origin: z.url(),
  token: z.string().min(1),
  readers: z.int().min(1),
  seconds: z.number().positive(),
  warmupSeconds: z.number().min(0),
  endpoints: z.array(z.object({ name: z.string(), path: z.string().startsWith("/") })).min(1),
});
export type LoadPlan = z.infer<typeof loadPlanSchema>;

export const endpointFiguresSchema = z.object({
  name: z.string(),
  path: z.string(),
  requests: z.int(),
  reqPerSec: z.number(),
  p50: z.number(),
  p95: z.number(),
  p99: z.number(),
  max: z.number(),
  bytes: z.int(),
  errors: z.int(),
});
export type EndpointFigures = z.infer<typeof endpointFiguresSchema>;
