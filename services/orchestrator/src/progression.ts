import { completeMap } from "./complete-map.ts";
import {
  expandSteps,
  getMembersByIds,
  getPhasesByIds,
  listInitsByBatch,
  listPendingMemberPhases,
  listStepsOfMemberPhases,
  transitionBatch,
  type MemberPhase,
  type PhaseExecution,
  skipSteps,
  type ChainStep,
  type StepExpansion,
  type StepSkip,
} from "@matoolkit/db";
import type { RunbookDefinition } from "@matoolkit/domain";
import type { BatchInfo } from "./batch-info.ts";
import { lockBatchInfos, variablesFor } from "./batch-info.ts";
import type { HandlerScope } from "./context.ts";
import {
  dispatchExecution,
  dispatchStarts,
  failToDispatch,
  isDone,
  nextDispatchable,
  nextGroupToStart,
  resolveCall,
  stepStart,
  type DispatchError,
  type StepStart,
} from "./dispatch.ts";
import { handleTerminalFailure } from "./failure.ts";
import { clausesOf, decideStep, type StepVerdict } from "./step-conditions.ts";
import { decideExpansion, forEachOf } from "./step-for-each.ts";

export type { MemberPhase };

/** Rows the caller has already read in this transaction, so they are not read again. */
export interface KnownRows {
  readonly phases?: ReadonlyMap<number, PhaseExecution>;
  /**
   * Read under lockBatchInfos (FOR SHARE) in this transaction, before any execution row was
   * locked: the status must stay what it says until the commit (see acceptsDispatch).
   */
  readonly batches?: ReadonlyMap<number, BatchInfo>;
}

/**
 * Whether the batch's work may be sent to workers now. A paused batch sends nothing (issue 12):
 * its running jobs finish and their results are recorded, but the next steps stay pending until
 * the resume starts them; an ended batch has nothing left to send. Callers read the status under
 * the batch's share lock, so a pause committing meanwhile cannot slip between read and send.
 */
export function acceptsDispatch(batch: BatchInfo): boolean {
  switch (batch.status) {
    case "detected":
    case "init_dispatched":
    case "active":
      return true;
    case "paused":
    case "completed":
    case "failed":
    case "cancelled":
      return false;
    default: {
      const unreachable: never = batch.status;
      throw new Error(`unknown batch status ${String(unreachable)}`);
    }
  }
}

/**
 * The chain's next execution to start now: nextDispatchable, unless it is a retry whose
 * retry_after has not come yet. Its retry-check dispatches it then; starting it early (a
 * duplicate phase-due, the phase restart a resume sends) would cut the retry interval short.
 */
export function nextToStart<T extends { status: string; stepIndex: number; retryAfter: Date | null }>(
  chain: readonly T[],
  now: Date,
): T | undefined {
  const next = nextDispatchable(chain);
  if (next?.retryAfter != null && next.retryAfter.getTime() > now.getTime()) return undefined;
  return next;
}

/**
 * Per-member progression (000 PhaseProgressionService.CheckMemberProgressionAsync) for many
 * members at once: for each (member, phase), walk the member's steps of that phase in step_index
 * order and dispatch the next pending one, skipping (issue 30) each whose `when:` is false for the
 * member then (or whose for_each: list is empty). A for_each step is expanded into one row per
 * value when its turn comes, and its rows start together (one link of the chain, nextGroupToStart). Members progress independently; a member that is no longer active gets nothing. Set-based: the members, phases, batches and steps are read in one
 * query each, and every dispatch of the batch is ONE guarded transition and ONE outbox insert
 * (skips: one more per `when:` clause that was false).
 */
export async function advanceMembers(
  scope: HandlerScope,
  pairs: readonly MemberPhase[],
  known: KnownRows = {},
): Promise<void> {
  if (pairs.length === 0) return;
  const { trx } = scope;
  const members = byId(
    await getMembersByIds(
      trx,
      pairs.map((pair) => pair.memberId),
    ),
  );
  const phases = await completeMap(known.phases, unique(pairs.map((pair) => pair.phaseExecutionId)), (ids) =>
    getPhasesByIds(trx, ids).then(byId),
  );
  const batches = await completeMap(
    known.batches,
    unique([...phases.values()].map((phase) => phase.batchId)),
    (ids) => lockBatchInfos(trx, ids),
  );
  // A completed phase still progresses: a member that joined after it completed gets catch-up
  // steps in it (000 "Member Catch-Up Protocol": phases "dispatched or completed"), and they
  // must be dispatched, not left pending forever. Other phase states never have runnable steps.
  // A paused batch's members start nothing: the resume starts them (see acceptsDispatch).
  const runnable = uniquePairs(pairs).filter((pair) => {
    const phase = phases.get(pair.phaseExecutionId);
    const batch = phase === undefined ? undefined : batches.get(phase.batchId);
    return (
      members.get(pair.memberId)?.status === "active" &&
      (phase?.status === "dispatched" || phase?.status === "completed") &&
      batch !== undefined &&
      acceptsDispatch(batch)
    );
  });
  if (runnable.length === 0) return;

  const chains = groupBy(await listStepsOfMemberPhases(trx, runnable), pairKeyOfStep);
  const runbooks = await runbooksOf(scope, runnable, phases, batches);
  const skips: (StepSkip & { pair: string })[] = [];
  const expansions: (StepExpansion & Omit<Start, "step">)[] = [];
  const starts: Start[] = [];
  const unresolvable: { pair: string; step: ChainStep; batch: BatchInfo; error: DispatchError }[] = [];
  for (const pair of runnable) {
    const key = pairKey(pair);
    const phase = phases.get(pair.phaseExecutionId)!;
    const batch = batches.get(phase.batchId);
    if (batch === undefined) continue;
    const member = members.get(pair.memberId)!;
    const variables = once(() => variablesFor(batch, member));
    const runbook = runbooks.get(runbookKey(batch.runbookName, phase.runbookVersion));
    // Steps whose `when:` is false (or whose for_each: list is empty) are skipped in turn (issue
    // 30) until one runs, expands or fails, or the chain ends.
    for (;;) {
      const chain = chains.get(key) ?? [];
      const group = nextGroupToStart(chain, scope.now());
      const head = group[0];
      if (head === undefined) break;
      const verdict = decide(runbook, phase, head, variables);
      if (verdict.kind === "invalid") {
        unresolvable.push({ pair: key, step: head, batch, error: verdict.error });
        break;
      }
      const expansion =
        verdict.kind === "skip"
          ? verdict
          : decideExpansion(forEachOf(runbook, phase.phaseName, head), head, variables);
      if (expansion.kind === "skip") {
        skips.push({ id: head.id, reason: expansion.reason, pair: key });
        chains.set(
          key,
          chain.map((step) => (step.id === head.id ? { ...step, status: "skipped" as const } : step)),
        );
        continue;
      }
      if (expansion.kind === "invalid")
        unresolvable.push({ pair: key, step: head, batch, error: expansion.error });
      else if (expansion.kind === "expand")
        expansions.push({ id: head.id, items: expansion.items, pair: key, batch, phase, variables });
      else for (const step of group) starts.push({ pair: key, step, batch, phase, variables });
      break;
    }
  }

  // A skip another delivery beat (it dispatched, skipped or cancelled the step first): that
  // member's chain is not ours to move on this time.
  const skippedIds = new Set((await skipSteps(trx, skips)).map((step) => step.id));
  const lost = new Set(skips.filter((skip) => !skippedIds.has(skip.id)).map((skip) => skip.pair));
  // A for_each step's rows, one per value, start together once expanded; one another delivery
  // expanded first is that delivery's to start.
  const toExpand = expansions.filter((expansion) => !lost.has(expansion.pair));
  const expanded = groupBy(await expandSteps(trx, toExpand), pairKeyOfStep);
  for (const expansion of toExpand) {
    const rows = expanded.get(expansion.pair);
    if (rows === undefined) {
      lost.add(expansion.pair);
      continue;
    }
    const { pair, batch, phase, variables } = expansion;
    for (const step of rows.filter((row) => row.status === "pending"))
      starts.push({ pair, step, batch, phase, variables });
  }

  const dispatches: (StepStart & { pair: string })[] = [];
  for (const { pair, step, batch, phase, variables } of starts) {
    if (lost.has(pair)) continue;
    const call = resolveCall(step, variables);
    if (!call.ok) {
      unresolvable.push({ pair, step, batch, error: call.error });
      continue;
    }
    dispatches.push({
      pair,
      ...stepStart(scope, step, call, { batch, runbookVersion: phase.runbookVersion }),
    });
  }
  const moved = await dispatchStarts(
    scope,
    dispatches.filter((entry) => !lost.has(entry.pair)),
  );
  // A member that got no next step here (its chain ended, failed, or another delivery moved it)
  // may let its phase close or make room in its start window: checked and nudged after the
  // commit. One that did is counted by dispatchStarts (follow-up-phases.ts).
  const movedPairs = new Set(moved.map(pairKeyOfStep));
  for (const pair of runnable) {
    if (!movedPairs.has(pairKey(pair))) scope.followUps.phaseIds.add(pair.phaseExecutionId);
  }
  // One value's unresolvable params fail it, and the member's failure cancels its other values.
  const failedPairs = new Set<string>();
  for (const { pair, step, batch, error } of unresolvable) {
    if (lost.has(pair) || failedPairs.has(pair)) continue;
    failedPairs.add(pair);
    const ref = { kind: "step", id: step.id } as const;
    const failed = await failToDispatch(scope, ref, error);
    if (failed !== undefined) await handleTerminalFailure(scope, { ref, row: failed, batch });
  }
  const finished = runnable.filter((pair) => {
    const chain = chains.get(pairKey(pair)) ?? [];
    return !lost.has(pairKey(pair)) && chain.length > 0 && chain.every(isDone);
  });
  await startNextPhases(scope, finished, { phases, batches });
}

/**
 * A member that has just finished its chain in a phase starts its waiting chain in the next
 * phase that has run (issue 12). Only a redrive leaves such work: it reopens the member's steps
 * in every phase it missed, and starts the first one only (member-redriven.ts), so the member runs
 * its phases in order, as the batch did: a cutover never starts before its pre-checks passed
 * again. Elsewhere a later phase's chain has started already (phase-due), and this finds nothing.
 */
async function startNextPhases(
  scope: HandlerScope,
  finished: readonly MemberPhase[],
  known: { phases: ReadonlyMap<number, PhaseExecution>; batches: ReadonlyMap<number, BatchInfo> },
): Promise<void> {
  if (finished.length === 0) return;
  const waiting = await listPendingMemberPhases(
    scope.trx,
    finished.map((pair) => pair.memberId),
  );
  if (waiting.length === 0) return;
  const phases = await completeMap(
    known.phases,
    unique(waiting.map((pair) => pair.phaseExecutionId)),
    (ids) => getPhasesByIds(scope.trx, ids).then(byId),
  );
  const next = new Map<number, { pair: MemberPhase; sequence: number }>();
  for (const done of finished) {
    const from = phases.get(done.phaseExecutionId);
    if (from === undefined) continue;
    for (const pair of waiting) {
      const phase = phases.get(pair.phaseExecutionId);
      if (pair.memberId !== done.memberId || phase === undefined) continue;
      if (phase.batchId !== from.batchId || phase.sequence <= from.sequence) continue;
      const current = next.get(pair.memberId);
      if (current === undefined || phase.sequence < current.sequence)
        next.set(pair.memberId, { pair, sequence: phase.sequence });
    }
  }
  await advanceMembers(
    scope,
    [...next.values()].map((entry) => entry.pair),
    { phases, batches: known.batches },
  );
}

/** One execution the chain starts now (a for_each step's: one of its values). */
interface Start {
  readonly pair: string;
  readonly step: ChainStep;
  readonly batch: BatchInfo;
  readonly phase: PhaseExecution;
  readonly variables: () => Record<string, unknown>;
}

/** One member, one phase: the catch-up and single-result paths. */
export function advanceMember(scope: HandlerScope, pair: MemberPhase, known: KnownRows = {}): Promise<void> {
  return advanceMembers(scope, [pair], known);
}

/**
 * Init steps run one at a time for the whole batch (000 "Execution Model"); when the last one
 * has succeeded the batch becomes active.
 */
export async function advanceInit(
  scope: HandlerScope,
  args: { batch: BatchInfo; runbookVersion: number },
): Promise<void> {
  const inits = await listInitsByBatch(scope.trx, args.batch.id, args.runbookVersion);
  if (inits.length > 0 && inits.every((init) => init.status === "succeeded")) {
    await transitionBatch(scope.trx, args.batch.id, "activate", { reason: "init complete" });
    return;
  }
  // Paused (a version transition's rerun init): the resume sends its check.
  if (!acceptsDispatch(args.batch)) return;
  const next = nextToStart(inits, scope.now());
  if (next === undefined) return;
  const ref = { kind: "init", id: next.id } as const;
  const outcome = await dispatchExecution(scope, {
    ref,
    row: { ...next, phaseExecutionId: null, batchMemberId: null },
    batch: args.batch,
    runbookVersion: args.runbookVersion,
    variables: variablesFor(args.batch),
  });
  if (outcome.kind === "failed") {
    await handleTerminalFailure(scope, { ref, row: outcome.row, batch: args.batch });
  }
}

/**
 * The runbook versions of these pairs' phases (the `when:` clauses live there), one cached lookup
 * per version: most groups of results belong to one batch, so one lookup.
 */
async function runbooksOf(
  scope: HandlerScope,
  pairs: readonly MemberPhase[],
  phases: ReadonlyMap<number, PhaseExecution>,
  batches: ReadonlyMap<number, BatchInfo>,
): Promise<Map<string, RunbookDefinition>> {
  const wanted = new Map<string, { name: string; version: number }>();
  for (const pair of pairs) {
    const phase = phases.get(pair.phaseExecutionId);
    const batch = phase === undefined ? undefined : batches.get(phase.batchId);
    if (phase === undefined || batch === undefined) continue;
    wanted.set(runbookKey(batch.runbookName, phase.runbookVersion), {
      name: batch.runbookName,
      version: phase.runbookVersion,
    });
  }
  const runbooks = new Map<string, RunbookDefinition>();
  for (const [key, { name, version }] of wanted)
    runbooks.set(key, await scope.runbooks.get(scope.trx, name, version));
  return runbooks;
}

function runbookKey(name: string, version: number): string {
  return `${name}@${version}`;
}

/** A for_each step's value (item_count set) ran its `when:` already, before it was expanded. */
function decide(
  runbook: RunbookDefinition | undefined,
  phase: PhaseExecution,
  step: ChainStep,
  variables: () => Record<string, unknown>,
): StepVerdict {
  if (step.itemCount !== null) return { kind: "run" };
  const clauses = runbook === undefined ? [] : clausesOf(runbook, phase.phaseName, step);
  return decideStep(clauses, step, variables);
}

/** `make` called at most once, on first use. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

function pairKey(pair: MemberPhase): string {
  return `${pair.memberId}:${pair.phaseExecutionId}`;
}

function pairKeyOfStep(step: ChainStep): string {
  return `${step.batchMemberId}:${step.phaseExecutionId}`;
}

function uniquePairs(pairs: readonly MemberPhase[]): MemberPhase[] {
  return [...new Map(pairs.map((pair) => [pairKey(pair), pair])).values()];
}

function unique(ids: readonly number[]): number[] {
  return [...new Set(ids)];
}

function byId<T extends { id: number }>(rows: readonly T[]): Map<number, T> {
  return new Map(rows.map((row) => [row.id, row]));
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group === undefined) groups.set(key(row), [row]);
    else group.push(row);
  }
  return groups;
}
