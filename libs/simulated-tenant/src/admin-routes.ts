import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { allowInvitesFromValues } from "./behaviours.ts";
import { redeemInvitations } from "./graph/invitation-redemption.ts";
import { prerequisiteRulesSchema } from "./prerequisite-rules.ts";
import type { SimulatorContext } from "./simulator-context.ts";
import { parseTenantSeed, TenantSeedError, type TenantSeed } from "./seed.ts";
import { tenantAppSettingsSchema } from "./tenant-app.ts";

const faultSchema = z.object({
  api: z.enum(["graph", "exchange"]).optional(),
  /** `concurrency`: Exchange's per-tenant concurrency refusal (exchange only) instead of 429/503. */
  kind: z.enum(["throttle", "concurrency"]).optional(),
  count: z.number().int().min(1),
  status: z.union([z.literal(429), z.literal(503)]).optional(),
  retryAfterSeconds: z.number().min(0).optional(),
});

const settingsSchema = z.object({
  replicationDelayMs: z.number().int().min(0).optional(),
  throttleRate: z.number().min(0).max(1).optional(),
  retryAfterSeconds: z.number().min(0).optional(),
  behaviours: z
    .object({
      replicaReads: z.enum(["flapping", "settled"]).optional(),
      writeLagMs: z.number().int().min(0).nullable().optional(),
      mailEnabledGroupMembership: z.enum(["refused", "allowed"]).optional(),
      syncedUserWrites: z.enum(["refused", "allowed"]).optional(),
      allowInvitesFrom: z.enum(allowInvitesFromValues).optional(),
      exchangeConcurrencyRate: z.number().min(0).max(1).optional(),
      inviteesRedeem: z.enum(["manual", "at-once"]).optional(),
    })
    .strict()
    .optional(),
  prerequisites: prerequisiteRulesSchema.optional(),
});

const redeemSchema = z.object({ userId: z.string().min(1).optional() }).strict();

/**
 * `/_simulator`: what a rehearsal changed and knobs for tests, not part of any Microsoft API.
 * GET state (every object as written), GET changes (the write log), POST reset (re-seed, or the
 * seed in the body), POST faults (throttle the next N requests), GET/PUT settings, POST
 * invitations/redeem (stands in for invited users opening their redeem link: every pending
 * invitation, or `{userId}`'s; Graph has no API for it, see graph/invitation-redemption.ts),
 * GET/PUT app (the worker app's grants and Exchange role, the invitation policy, unverified
 * domains).
 */
export function adminRoutes(context: SimulatorContext, reset: (seed?: TenantSeed) => void): Router {
  const { state, faults, exchangeConcurrency } = context;
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
    const { kind, ...fault } = parsed.data;
    if (kind === "concurrency") {
      if (fault.api === "graph") {
        response.status(400).json({ error: "kind: concurrency is an Exchange refusal (api: exchange)" });
        return;
      }
      exchangeConcurrency.arm(fault.count);
    } else {
      faults.arm(fault);
    }
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
    const { replicationDelayMs, throttleRate, retryAfterSeconds, behaviours, prerequisites } = parsed.data;
    if (replicationDelayMs !== undefined) state.replicationDelayMs = replicationDelayMs;
    if (behaviours !== undefined) {
      const { writeLagMs, ...rest } = behaviours;
      state.behaviours = {
        ...state.behaviours,
        ...rest,
        ...(writeLagMs === undefined ? {} : { writeLagMs: writeLagMs ?? undefined }),
      };
    }
    if (prerequisites !== undefined) state.prerequisites = { ...state.prerequisites, ...prerequisites };
    if (throttleRate !== undefined || retryAfterSeconds !== undefined) {
      faults.setThrottle({
        ...faults.throttle,
        rate: throttleRate ?? faults.throttle.rate,
        retryAfterSeconds: retryAfterSeconds ?? faults.throttle.retryAfterSeconds,
      });
    }
    response.json(settingsOf(context));
  });
  router.post("/invitations/redeem", (request, response) => {
    const parsed = redeemSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      response.status(400).json({ error: describe(parsed.error) });
      return;
    }
    response.json({ redeemed: redeemInvitations(state, parsed.data.userId) });
  });
  // The worker app's grants and tenant settings: GET them, or PUT a change (e.g. a permission
  // removed: `{"graphPermissions": [...]}`, the Exchange role taken away: `{"exchangeRole": null}`).
  router.get("/app", (_request, response) => {
    response.json(context.app.settings());
  });
  router.put("/app", (request, response) => {
    const parsed = tenantAppSettingsSchema.safeParse(request.body);
    if (!parsed.success) {
      response.status(400).json({ error: describe(parsed.error) });
      return;
    }
    context.app.apply(parsed.data);
    response.json(context.app.settings());
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
    behaviours: { ...state.behaviours, writeLagMs: state.behaviours.writeLagMs ?? null },
    prerequisites: state.prerequisites,
  };
}

function describe(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`).join("; ");
}
