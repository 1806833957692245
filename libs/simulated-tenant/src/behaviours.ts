/**
 * Switchable service behaviours of the simulated tenant: each defaults to what the real service
 * does (so a rehearsal meets the service's strictness), and can be switched off where a test is
 * about something else. The source of each behaviour is cited where it is enforced:
 * - `replicaReads`: replicated-collection.ts;
 * - `writeLagMs`: graph/write-replica.ts;
 * - `mailEnabledGroupMembership`: graph/group-write-rules.ts;
 * - `syncedUserWrites`: graph/synced-user-rules.ts;
 * - `allowInvitesFrom`: graph/invitation-policy.ts;
 * - `exchangeConcurrencyRate`: exchange/concurrency-throttle.ts.
 */
import type { ReplicaReads } from "./replicated-collection.ts";

export type { ReplicaReads };

/** Entra's `authorizationPolicy.allowInvitesFrom` values (learn.microsoft.com/graph/api/resources/authorizationpolicy). */
export const allowInvitesFromValues = [
  "none",
  "adminsAndGuestInviters",
  "adminsGuestInvitersAndAllMembers",
  "everyone",
] as const;
export type AllowInvitesFrom = (typeof allowInvitesFromValues)[number];

export interface TenantBehaviours {
  /**
   * Reads inside the replication window: `flapping` (the real service: each read is served by
   * some replica, so a read after a write may show the new value, then the old, then the new),
   * or `settled` (one fixed lag: invisible until the delay has passed, then visible).
   */
  readonly replicaReads: ReplicaReads;
  /**
   * How long an object created a moment ago stays unknown to the replica that takes a write
   * referring to it (Graph: adding it to a group answers 404). Undefined: the replication delay.
   */
  readonly writeLagMs: number | undefined;
  /** `refused`: Graph refuses to create mail-enabled security groups and distribution lists, or change their membership. */
  readonly mailEnabledGroupMembership: "refused" | "allowed";
  /** `refused`: Graph refuses to change source-of-authority attributes of users synced from on-premises. */
  readonly syncedUserWrites: "refused" | "allowed";
  /** Who may invite B2B guests; `everyone` is the service's default in the commercial cloud. */
  readonly allowInvitesFrom: AllowInvitesFrom;
  /** Share of Exchange requests answered with the per-tenant concurrency refusal, 0..1. */
  readonly exchangeConcurrencyRate: number;
  /**
   * When invited users accept: `manual` (as the service: only when they open the redeem link,
   * which `POST /_simulator/invitations/redeem` stands in for), or `at-once` (each accepts as soon
   * as invited: a rehearsal that skips the days between preparation and cutover; `npm start`'s
   * default rehearsal uses it).
   */
  readonly inviteesRedeem: "manual" | "at-once";
}

/** As the real service (and the commercial cloud's default tenant settings). */
export const realServiceBehaviours: TenantBehaviours = {
  replicaReads: "flapping",
  writeLagMs: undefined,
  mailEnabledGroupMembership: "refused",
  syncedUserWrites: "refused",
  allowInvitesFrom: "everyone",
  exchangeConcurrencyRate: 0,
  inviteesRedeem: "manual",
};

export const simulatorProfiles = ["default", "chaos"] as const;
export type SimulatorProfile = (typeof simulatorProfiles)[number];

/** What a profile sets; explicit options given with it win. */
export interface ProfileSettings {
  readonly replicationDelayMs: number;
  readonly behaviours: TenantBehaviours;
  /** Graph/Exchange 429 rate (throttling with Retry-After, see faults.ts). */
  readonly throttleRate: number;
}

/**
 * `chaos`: a tenant having a bad day, within what the real service does: reads flap between
 * replicas for 400 ms after each write, objects created in the last 1.5 s are unknown to the
 * replica taking a write that refers to them, and one Exchange request in ten is refused with the
 * per-tenant concurrency text. Graph 429s are left to `throttle` (a run of refusals longer than
 * the worker's retry budget would fail a step for a reason the profile is not about).
 */
export function profileSettings(profile: SimulatorProfile): ProfileSettings {
  switch (profile) {
    case "default":
      return { replicationDelayMs: 0, behaviours: realServiceBehaviours, throttleRate: 0 };
    case "chaos":
      return {
        replicationDelayMs: 400,
        behaviours: {
          ...realServiceBehaviours,
          replicaReads: "flapping",
          writeLagMs: 1_500,
          exchangeConcurrencyRate: 0.1,
        },
        throttleRate: 0,
      };
    default: {
      const unreachable: never = profile;
      throw new RangeError(`Unknown simulator profile ${String(unreachable)}`);
    }
  }
}

export function parseSimulatorProfile(value: string): SimulatorProfile {
  const profile = simulatorProfiles.find((name) => name === value);
  if (profile === undefined)
    throw new RangeError(`profile must be one of ${simulatorProfiles.join(", ")} (got "${value}")`);
  return profile;
}

/**
 * A seeded pseudo-random source (mulberry32): the same seed draws the same sequence, so a chaos
 * run can be reproduced. Concurrent requests may still interleave differently between runs.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
