/**
 * What this worker process knows about invitations it sent recently, per user object id.
 *
 * Why: after POST /invitations, reads of the user show `externalUserState` only once the
 * directory has replicated the write, so a re-run seconds later (a throttled retry, a
 * redelivered job) would see an internal user and invite again, and a second invitation email is
 * an incident. `sent` means "do not invite again"; `unknown` means the request may or may not
 * have reached Graph (no answer), so the next attempt waits for the user to show as external
 * before deciding. Entries expire after `ttlMs`, by which time reads are consistent.
 *
 * Limit: it is process memory. A job redelivered to another worker within the replication
 * window is guarded only by the user's replicated state.
 */
export type InvitationOutcome = "sent" | "unknown";

export class RecentInvitations {
  readonly #entries = new Map<string, { outcome: InvitationOutcome; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(userId: string): InvitationOutcome | undefined {
    this.#prune();
    return this.#entries.get(userId.toLowerCase())?.outcome;
  }

  set(userId: string, outcome: InvitationOutcome): void {
    this.#entries.set(userId.toLowerCase(), { outcome, at: this.now() });
  }

  delete(userId: string): void {
    this.#entries.delete(userId.toLowerCase());
  }

  #prune(): void {
    const oldest = this.now() - this.ttlMs;
    for (const [key, entry] of this.#entries) if (entry.at < oldest) this.#entries.delete(key);
  }
}
