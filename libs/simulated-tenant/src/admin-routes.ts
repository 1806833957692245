import { Router, type Request, type Response } from "express";
import { z } from "zod";
import type { SimulatorContext } from "./simulator-context.ts";
import { parseTenantSeed, TenantSeedError, type TenantSeed } from "./seed.ts";

const faultSchema = z.object({
  api: z.enum(["graph", "exchange"]).optional(),
  count: z.number().int().min(1),
  status: z.union([z.literal(429), z.literal(503)]).optional(),
  retryAfterSeconds: z.number().min(0).optional(),
});

const settingsSchema = z.object({
  replicationDelayMs: z.number().int().min(0).optional(),
  throttleRate: z.number().min(0).max(1).optional(),
  retryAfterSeconds: z.number().min(0).optional(),
});

/**
 * `/_simulator`: what a rehearsal changed and knobs for tests, not part of any Microsoft API.
 * GET state (every object as written), GET changes (the write log), POST reset (re-seed, or the
 * seed in the body), POST faults (throttle the next N requests), GET/PUT settings.
 */
export function adminRoutes(context: SimulatorContext, reset: (seed?: TenantSeed) => void): Router {
  const { state, faults } = context;
  const router = Router();
  router.get("/state", (_request, response) => {
    response.json({
      tenantId: state.tenantId,
      domains: state.domains,
      users: state.users.list("primary"),
      groups: state.groups.list("primary"),
      invitations: state.invitations.list("primary"),
      recipients: state.recipients.list("primary"),
    });
  });
  router.get("/changes", (_request, response) => {
    response.json({ value: state.changes() });
  });
  router.post("/reset", (request: Request, response: Response) => {
    try {
      const body: unknown = request.body;
      const hasSeed = body !== undefined && body !== null && Object.keys(body as object).length > 0;
      reset(hasSeed ? parseTenantSeed(body, "request body") : undefined);
      response.status(204).end();
    } catch (error) {
      if (!(error instanceof TenantSeedError)) throw error;
      response.status(400).json({ error: error.message });
    }
  });
  router.post("/faults", (request, response) => {
    const parsed = faultSchema.safeParse(request.body);
    if (!parsed.success) {
      response.status(400).json({ error: describe(parsed.error) });
      return;
    }
    faults.arm(parsed.data);
    response.status(204).end();
  });
  router.get("/settings", (_request, response) => {
    response.json(settingsOf(context));
  });
  router.put("/settings", (request, response) => {
    const parsed = settingsSchema.safeParse(request.body);
    if (!parsed.success) {
      response.status(400).json({ error: describe(parsed.error) });
      return;
    }
    const { replicationDelayMs, throttleRate, retryAfterSeconds } = parsed.data;
    if (replicationDelayMs !== undefined) state.replicationDelayMs = replicationDelayMs;
    if (throttleRate !== undefined || retryAfterSeconds !== undefined) {
      faults.setThrottle({
        ...faults.throttle,
        rate: throttleRate ?? faults.throttle.rate,
        retryAfterSeconds: retryAfterSeconds ?? faults.throttle.retryAfterSeconds,
      });
    }
    response.json(settingsOf(context));
  });
  router.get("/requests", (_request, response) => {
    response.json(faults.counts());
  });
  return router;
}

function settingsOf({ state, faults }: SimulatorContext) {
  return {
    replicationDelayMs: state.replicationDelayMs,
    throttleRate: faults.throttle.rate,
    retryAfterSeconds: faults.throttle.retryAfterSeconds,
  };
}

function describe(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`).join("; ");
}
