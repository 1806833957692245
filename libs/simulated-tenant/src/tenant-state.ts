import { randomUUID } from "node:crypto";
import type {
  DirectoryGroup,
  DirectoryUser,
  ExchangeRecipient,
  Invitation,
  SentMail,
  TenantChange,
} from "./model.ts";
import { realServiceBehaviours, type TenantBehaviours } from "./behaviours.ts";
import { realServicePrerequisiteRules, type PrerequisiteRules } from "./prerequisite-rules.ts";
import { ReplicatedCollection } from "./replicated-collection.ts";

export interface TenantStateOptions {
  readonly tenantId: string;
  /** Verified domains; the first is the default (`contoso.onmicrosoft.com`-like) domain. */
  readonly domains: readonly string[];
  readonly replicationDelayMs: number;
  readonly now: () => number;
  /** Default: as the real service (behaviours.ts). */
  readonly behaviours?: TenantBehaviours;
  /** Which replica answers a flapping read (default Math.random; seeded for a reproducible run). */
  readonly random?: () => number;
  /** Defaults to the real service's rules (prerequisite-rules.ts). */
  readonly prerequisites?: Partial<PrerequisiteRules>;
}

/**
 * Everything a simulated tenant knows. Graph routes work on users, groups and invitations,
 * Exchange routes on recipients; both record their writes in `changes`. Keys: users, groups and
 * invitations by `id`, recipients by `Guid`. Lookups by UPN or address are case-insensitive, as
 * in the real services.
 */
export class TenantState {
  readonly tenantId: string;
  readonly domains: readonly string[];
  readonly users: ReplicatedCollection<DirectoryUser>;
  readonly groups: ReplicatedCollection<DirectoryGroup>;
  readonly invitations: ReplicatedCollection<Invitation>;
  readonly recipients: ReplicatedCollection<ExchangeRecipient>;
  readonly now: () => number;
  /** Changeable at run time (PUT /_simulator/settings). */
  replicationDelayMs: number;
  /** Changeable at run time (tests, PUT /_simulator/settings). */
  behaviours: TenantBehaviours;
  /** B2B and mailbox-move prerequisites; changeable at run time (PUT /_simulator/settings). */
  prerequisites: PrerequisiteRules;
  readonly #changes: TenantChange[] = [];
  readonly #sentMail: SentMail[] = [];

  constructor(options: TenantStateOptions) {
    this.tenantId = options.tenantId;
    this.domains = options.domains;
    this.replicationDelayMs = options.replicationDelayMs;
    this.prerequisites = { ...realServicePrerequisiteRules, ...options.prerequisites };
    this.now = options.now;
    this.behaviours = options.behaviours ?? realServiceBehaviours;
    const common = {
      delayMs: () => this.replicationDelayMs,
      now: options.now,
      reads: () => this.behaviours.replicaReads,
      random: options.random ?? Math.random,
    };
    this.users = new ReplicatedCollection({ keyOf: (user) => user.id, ...common });
    this.groups = new ReplicatedCollection({ keyOf: (group) => group.id, ...common });
    this.invitations = new ReplicatedCollection({ keyOf: (invitation) => invitation.id, ...common });
    this.recipients = new ReplicatedCollection({ keyOf: (recipient) => recipient.Guid, ...common });
  }

  /** How long a new object stays unknown to the replica that takes a write referring to it. */
  get writeLagMs(): number {
    return this.behaviours.writeLagMs ?? this.replicationDelayMs;
  }

  newId(): string {
    return randomUUID();
  }

  isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  recordChange(change: Omit<TenantChange, "sequence" | "at">): void {
    this.#changes.push({ sequence: this.#changes.length + 1, at: this.isoNow(), ...change });
  }

  changes(): readonly TenantChange[] {
    return [...this.#changes];
  }

  recordSentMail(mail: SentMail): void {
    this.#sentMail.push(mail);
  }

  /** The mails sent through Graph sendMail, oldest first. */
  sentMail(): readonly SentMail[] {
    return [...this.#sentMail];
  }

  /** Empties every collection, the change log and the sent mail (before a re-seed). */
  clear(): void {
    this.users.clear();
    this.groups.clear();
    this.invitations.clear();
    this.recipients.clear();
    this.#changes.length = 0;
    this.#sentMail.length = 0;
  }

  /** A user by id or UPN (Graph accepts both in `/users/{id | userPrincipalName}`). */
  findUser(idOrUpn: string, view: "replica" | "primary" = "replica"): DirectoryUser | undefined {
    const byId = this.users.get(idOrUpn, view);
    if (byId !== undefined) return byId;
    const upn = idOrUpn.toLowerCase();
    return this.users.find((user) => user.userPrincipalName.toLowerCase() === upn, view);
  }

  /**
   * A recipient as Exchange resolves `-Identity`: Guid, ExternalDirectoryObjectId, Identity, Name,
   * Alias, or any of its SMTP addresses.
   */
  findRecipient(identity: string, view: "replica" | "primary" = "replica"): ExchangeRecipient | undefined {
    const wanted = identity.toLowerCase();
    return this.recipients.find((recipient) => {
      if (
        [
          recipient.Guid,
          recipient.ExternalDirectoryObjectId,
          recipient.Identity,
          recipient.Name,
          recipient.Alias,
        ]
          .filter((value): value is string => value !== null)
          .some((value) => value.toLowerCase() === wanted)
      ) {
        return true;
      }
      return recipient.EmailAddresses.some((address) => address.toLowerCase() === `smtp:${wanted}`);
    }, view);
  }
}
