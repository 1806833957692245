import { nextScheduledTime, resolvePointInTime, type JobSchedule } from "./schedule.ts";
import { TimerSet } from "./timers.ts";

/**
 * The Dapr Scheduler's part of the jobs API, shared by every sidecar of a broker: jobs belong to an
 * app id, each trigger goes to exactly one connected sidecar of that app id (round robin), and a
 * failed trigger is retried per the job's failure policy. A job without one gets the Scheduler's
 * default, set by go-etcd-cron when the job is stored (internal/scheduler/builder.go, v0.9.x in
 * Dapr 1.16 to v0.12.x in 1.18): constant, 1 s interval, max 3 retries, so 4 attempts and the
 * trigger is dropped (a one-shot job is then gone). A 404 from
 * the app is not retried. Triggers due while no sidecar of the app id is connected are held until
 * one connects, as the Scheduler does.
 */

export type JobFailurePolicy =
  | { readonly kind: "constant"; readonly maxRetries: number | undefined; readonly intervalMs: number }
  | { readonly kind: "drop" };

export interface JobDefinition {
  readonly name: string;
  readonly schedule: JobSchedule | undefined;
  readonly dueTime: string | undefined;
  readonly repeats: number | undefined;
  readonly ttl: string | undefined;
  /**
   * JSON value given as `data`; undefined when the request had none, and then every trigger fails
   * without reaching the app, as on daprd 1.16.0–1.18.2 (see `triggerJob` in sidecar.ts).
   */
  readonly data: unknown;
  readonly failurePolicy: JobFailurePolicy | undefined;
}

export interface JobView {
  readonly appId: string;
  readonly name: string;
  readonly schedule: string | undefined;
  readonly dueTime: string | undefined;
  readonly repeats: number | undefined;
  readonly ttl: string | undefined;
  readonly data: unknown;
  readonly failurePolicy: JobFailurePolicy | undefined;
  readonly createdAt: Date;
  /** Trigger rounds started so far (retries of one round are not counted). */
  readonly triggerCount: number;
  readonly nextTriggerAt: Date | undefined;
}

export type JobTriggerOutcome =
  | { readonly kind: "success"; readonly httpStatus: number }
  | { readonly kind: "failure"; readonly httpStatus: number | undefined; readonly error: string }
  | { readonly kind: "not-found"; readonly httpStatus: 404 }
  /** The sidecar is shutting down; the trigger goes back to the queue without using an attempt. */
  | { readonly kind: "abandoned" };

export interface JobTriggerRecord {
  readonly appId: string;
  readonly name: string;
  readonly sidecarId: string;
  readonly round: number;
  readonly attempt: number;
  readonly at: Date;
  readonly outcome: "success" | "failure" | "not-found";
  readonly httpStatus: number | undefined;
  readonly error: string | undefined;
}

export interface JobTriggerTarget {
  readonly appId: string;
  readonly sidecarId: string;
  trigger(name: string, data: unknown): Promise<JobTriggerOutcome>;
}

export class JobConflictError extends Error {
  constructor(name: string) {
    super(`job ${name} already exists and overwrite is false`);
    this.name = "JobConflictError";
  }
}

export class JobDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobDefinitionError";
  }
}

interface ScheduledJob {
  readonly appId: string;
  readonly definition: JobDefinition;
  readonly generation: number;
  readonly createdAt: Date;
  readonly expiresAt: Date | undefined;
  triggerCount: number;
  nextTriggerAt: Date | undefined;
  roundsInFlight: number;
}

interface PendingRound {
  readonly job: ScheduledJob;
  readonly round: number;
  readonly attempt: number;
}

export interface JobSchedulerOptions {
  readonly defaultFailurePolicy: JobFailurePolicy;
  readonly now: () => Date;
}

export class JobScheduler {
  private readonly jobs = new Map<string, Map<string, ScheduledJob>>();
  private readonly targets = new Map<string, JobTriggerTarget[]>();
  private readonly pending = new Map<string, PendingRound[]>();
  private readonly triggerLog: JobTriggerRecord[] = [];
  private readonly timers = new TimerSet();
  private readonly nextTimer = new Map<ScheduledJob, symbol>();
  private roundRobin = 0;
  private generation = 0;
  private closed = false;

  constructor(private readonly options: JobSchedulerOptions) {}

  schedule(appId: string, definition: JobDefinition, overwrite: boolean): void {
    const jobs = this.jobsOf(appId);
    const existing = jobs.get(definition.name);
    if (existing !== undefined && !overwrite) throw new JobConflictError(definition.name);

    const createdAt = this.options.now();
    const dueAt =
      definition.dueTime === undefined
        ? undefined
        : resolvePointInTime("dueTime", definition.dueTime, createdAt);
    const expiresAt =
      definition.ttl === undefined ? undefined : resolvePointInTime("ttl", definition.ttl, createdAt);
    const firstAt =
      dueAt ?? (definition.schedule ? nextScheduledTime(definition.schedule, createdAt) : undefined);
    if (firstAt === undefined)
      throw new JobDefinitionError(`job ${definition.name} never triggers: no schedule or dueTime`);

    if (existing !== undefined) this.remove(existing);
    const job: ScheduledJob = {
      appId,
      definition,
      generation: ++this.generation,
      createdAt,
      expiresAt,
      triggerCount: 0,
      nextTriggerAt: undefined,
      roundsInFlight: 0,
    };
    jobs.set(definition.name, job);
    this.arm(job, firstAt);
  }

  get(appId: string, name: string): JobView | undefined {
    const job = this.jobs.get(appId)?.get(name);
    return job === undefined ? undefined : view(job);
  }

  /** Deleting an unknown job succeeds, as with the Scheduler's etcd backend. */
  delete(appId: string, name: string): void {
    const job = this.jobs.get(appId)?.get(name);
    if (job !== undefined) this.remove(job);
  }

  list(appId?: string): JobView[] {
    const apps =
      appId === undefined
        ? [...this.jobs.values()]
        : [this.jobs.get(appId) ?? new Map<string, ScheduledJob>()];
    return apps.flatMap((jobs) => [...jobs.values()].map(view));
  }

  triggers(appId?: string): JobTriggerRecord[] {
    return this.triggerLog.filter((record) => appId === undefined || record.appId === appId);
  }

  /** Registers a connected sidecar; returns the function that disconnects it. */
  attach(target: JobTriggerTarget): () => void {
    const targets = this.targets.get(target.appId) ?? [];
    targets.push(target);
    this.targets.set(target.appId, targets);
    const held = this.pending.get(target.appId) ?? [];
    this.pending.delete(target.appId);
    for (const round of held) void this.deliver(round);
    return () => {
      const remaining = (this.targets.get(target.appId) ?? []).filter((candidate) => candidate !== target);
      this.targets.set(target.appId, remaining);
    };
  }

  close(): void {
    this.closed = true;
    this.timers.clearAll();
    this.nextTimer.clear();
  }

  private arm(job: ScheduledJob, at: Date | undefined): void {
    const previous = this.nextTimer.get(job);
    if (previous !== undefined) this.timers.clear(previous);
    this.nextTimer.delete(job);

    const limitReached =
      job.definition.repeats !== undefined &&
      job.definition.repeats > 0 &&
      job.triggerCount >= job.definition.repeats;
    if (
      at === undefined ||
      limitReached ||
      (job.expiresAt !== undefined && at.getTime() > job.expiresAt.getTime())
    ) {
      job.nextTriggerAt = undefined;
      this.removeIfFinished(job);
      return;
    }
    job.nextTriggerAt = at;
    this.nextTimer.set(
      job,
      this.timers.at(at, this.options.now, () => this.fire(job, at)),
    );
  }

  private fire(job: ScheduledJob, scheduledAt: Date): void {
    if (this.closed || !this.isCurrent(job)) return;
    job.triggerCount += 1;
    job.roundsInFlight += 1;
    const round = job.triggerCount;
    const next =
      job.definition.schedule === undefined
        ? undefined
        : nextScheduledTime(job.definition.schedule, scheduledAt);
    this.arm(job, next);
    void this.deliver({ job, round, attempt: 1 });
  }

  private async deliver(pending: PendingRound): Promise<void> {
    const { job, round, attempt } = pending;
    if (this.closed || !this.isCurrent(job)) return;
    const target = this.pickTarget(job.appId);
    if (target === undefined) {
      const held = this.pending.get(job.appId) ?? [];
      held.push(pending);
      this.pending.set(job.appId, held);
      return;
    }

    const outcome = await target.trigger(job.definition.name, job.definition.data);
    if (outcome.kind === "abandoned") {
      if (!this.closed) void this.deliver(pending);
      return;
    }
    this.triggerLog.push({
      appId: job.appId,
      name: job.definition.name,
      sidecarId: target.sidecarId,
      round,
      attempt,
      at: this.options.now(),
      outcome: outcome.kind,
      httpStatus: outcome.httpStatus,
      error: outcome.kind === "failure" ? outcome.error : undefined,
    });

    const retryIn = outcome.kind === "failure" ? this.retryDelay(job, attempt) : undefined;
    if (retryIn !== undefined && !this.closed) {
      this.timers.after(retryIn, () => void this.deliver({ job, round, attempt: attempt + 1 }));
      return;
    }
    job.roundsInFlight -= 1;
    this.removeIfFinished(job);
  }

  private retryDelay(job: ScheduledJob, attempt: number): number | undefined {
    const policy = job.definition.failurePolicy ?? this.options.defaultFailurePolicy;
    switch (policy.kind) {
      case "drop":
        return undefined;
      case "constant":
        return policy.maxRetries === undefined || attempt <= policy.maxRetries
          ? policy.intervalMs
          : undefined;
      default:
        return assertNever(policy);
    }
  }

  private pickTarget(appId: string): JobTriggerTarget | undefined {
    const targets = this.targets.get(appId) ?? [];
    if (targets.length === 0) return undefined;
    this.roundRobin = (this.roundRobin + 1) % Number.MAX_SAFE_INTEGER;
    return targets[this.roundRobin % targets.length];
  }

  /** A job without future triggers disappears once its last round has been delivered. */
  private removeIfFinished(job: ScheduledJob): void {
    if (job.nextTriggerAt === undefined && job.roundsInFlight === 0 && this.isCurrent(job)) this.remove(job);
  }

  private remove(job: ScheduledJob): void {
    const timer = this.nextTimer.get(job);
    if (timer !== undefined) this.timers.clear(timer);
    this.nextTimer.delete(job);
    const jobs = this.jobs.get(job.appId);
    if (jobs?.get(job.definition.name) === job) jobs.delete(job.definition.name);
  }

  private isCurrent(job: ScheduledJob): boolean {
    return this.jobs.get(job.appId)?.get(job.definition.name)?.generation === job.generation;
  }

  private jobsOf(appId: string): Map<string, ScheduledJob> {
    let jobs = this.jobs.get(appId);
    if (jobs === undefined) {
      jobs = new Map();
      this.jobs.set(appId, jobs);
    }
    return jobs;
  }
}

function view(job: ScheduledJob): JobView {
  return {
    appId: job.appId,
    name: job.definition.name,
    schedule: job.definition.schedule?.source,
    dueTime: job.definition.dueTime,
    repeats: job.definition.repeats,
    ttl: job.definition.ttl,
    data: job.definition.data,
    failurePolicy: job.definition.failurePolicy,
    createdAt: job.createdAt,
    triggerCount: job.triggerCount,
    nextTriggerAt: job.nextTriggerAt,
  };
}

function assertNever(value: never): never {
  throw new Error(`unexpected failure policy ${JSON.stringify(value)}`);
}
