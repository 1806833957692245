import { memberMachine, type MemberEvent } from "@matoolkit/domain";
import { sql } from "kysely";
import type { JsonObject } from "./column-types.ts";
import type { Db } from "./connection.ts";
import { jsonb } from "./json.ts";
import type { BatchMember } from "./members.table.ts";
import { applyTransition } from "./transition.ts";

/** 2,000 rows (8,000 bind parameters, far under the 65,535 of chunks.ts): a few ms to build. */
const MEMBER_ROWS_PER_STATEMENT = 2_000;

export interface NewMemberInput {
  readonly memberKey: string;
  readonly data: JsonObject;
}

/**
 * Adds members as `active`. A key already active in the batch is skipped (two scheduler ticks may
 * race, or an operator's upload races another), so the result holds only the rows actually
 * inserted. `announced`: add_dispatched_at = now, for callers that queue member-added in the same
 * transaction (an operator adding members to a running manual batch).
 */
export async function insertMembers(
  db: Db,
  batchId: number,
  members: readonly NewMemberInput[],
  options: { readonly announced?: boolean } = {},
): Promise<BatchMember[]> {
  return (await insertMemberRows(db, batchId, members, options, true)).rows;
}

/**
 * insertMembers without reading the rows back: how many were inserted. For a new batch of
 * 100,000 members (a manual batch's upload) whose rows the caller does not need: reading them
 * back held as many objects again in memory.
 */
export async function insertMembersCounted(
  db: Db,
  batchId: number,
  members: readonly NewMemberInput[],
): Promise<number> {
  return (await insertMemberRows(db, batchId, members, {}, false)).count;
}

async function insertMemberRows(
  db: Db,
  batchId: number,
  members: readonly NewMemberInput[],
  options: { readonly announced?: boolean },
  readBack: boolean,
): Promise<{ rows: BatchMember[]; count: number }> {
  const rows: BatchMember[] = [];
  let count = 0;
  // A statement at a time, each serialized only when it is sent: 100,000 members serialized and
  // compiled at once held the event loop for a second (admin API uploads share it).
  for (let start = 0; start < members.length; start += MEMBER_ROWS_PER_STATEMENT) {
    const values = members.slice(start, start + MEMBER_ROWS_PER_STATEMENT).map((member) => ({
      batchId,
      memberKey: member.memberKey,
      dataJson: jsonb(member.data),
      ...(options.announced === true ? { addDispatchedAt: sql<Date>`now()` } : {}),
    }));
    const insert = db
      .insertInto("batchMembers")
      .values(values)
      // The partial unique index's predicate as a literal, not a parameter: PostgreSQL matches
      // the arbiter index when it plans, and a generic plan of the prepared statement
      // (statement-cache.ts) knows no parameter values ("no unique or exclusion constraint").
      .onConflict((conflict) =>
        conflict.columns(["batchId", "memberKey"]).where("status", "=", sql.lit("active")).doNothing(),
      );
    if (readBack) {
      const inserted = await insert.returningAll().execute();
      rows.push(...inserted);
      count += inserted.length;
    } else {
      count += Number((await insert.executeTakeFirst()).numInsertedOrUpdatedRows ?? 0n);
    }
  }
  return { rows, count };
}

export async function getMember(db: Db, id: number): Promise<BatchMember | undefined> {
  return db.selectFrom("batchMembers").selectAll().where("id", "=", id).executeTakeFirst();
}

/** In insertion order. */
export async function listMembers(db: Db, batchId: number): Promise<BatchMember[]> {
  return db.selectFrom("batchMembers").selectAll().where("batchId", "=", batchId).orderBy("id").execute();
}

export interface ListMembersPage {
  /** Only members with a larger id (the last id of the previous page). */
  readonly afterId?: number | undefined;
  /** At most this many; every member after `afterId` when undefined. */
  readonly limit?: number | undefined;
}

/**
 * A keyset page of a batch's members in id (insertion) order, read through the (batch_id, id)
 * index of migration 0007: only the page's rows, however deep the page and however many other
 * batches the table holds.
 */
export async function listMembersPage(
  db: Db,
  batchId: number,
  page: ListMembersPage,
): Promise<BatchMember[]> {
  // `batch_id = ANY(ARRAY[$1]) ORDER BY batch_id, id`, as listStepsByBatch does and for the same
  // reason: with a plain equality the planner walks the primary key and filters on batch_id,
  // assuming the batch's rows are spread evenly; for the newest batch of three finished
  // 10,000-member batches it read 20,000 other members first (6 ms, 1,313 buffers against 0.1 ms
  // and 9 through the index). An array match is no constant for the planner, so only the index
  // gives this order without sorting the batch.
  let query = db
    .selectFrom("batchMembers")
    .selectAll()
    .where(sql<boolean>`batch_id = ANY(${sql.val([batchId])}::int[])`);
  if (page.afterId !== undefined) query = query.where("id", ">", page.afterId);
  query = query.orderBy("batchId").orderBy("id");
  return (page.limit === undefined ? query : query.limit(page.limit)).execute();
}

/**
 * Applies `event` if the member is still active; undefined when it is not (idempotent failure).
 * `announced` (remove only): also stamps remove_dispatched_at, for a caller that queues
 * member-removed in the same transaction (an operator removing a member of a manual batch).
 */
export async function transitionMember(
  db: Db,
  id: number,
  event: MemberEvent,
  options: { readonly reason?: string; readonly actor?: string; readonly announced?: boolean } = {},
): Promise<BatchMember | undefined> {
  const { from, to } = memberMachine.transitions[event];
  const [row] = await applyTransition<BatchMember>(
    db,
    {
      table: "batch_members",
      entity: "member",
      batchIdColumn: "batch_id",
      from,
      to,
      set: {
        ...defaultColumns(event),
        ...(options.announced === true && event === "remove" ? { remove_dispatched_at: sql`now()` } : {}),
      },
      reason: options.reason,
      actor: options.actor,
    },
    sql`id = ${id}`,
  );
  return row;
}

function defaultColumns(event: MemberEvent): Record<string, unknown> {
  switch (event) {
    case "remove":
      return { removed_at: sql`now()` };
    case "fail":
      return { failed_at: sql`now()` };
    case "redrive":
      return { failed_at: null };
    default: {
      const unreachable: never = event;
      throw new Error(`unknown member event ${String(unreachable)}`);
    }
  }
}

/** Adds a step's output params to the member's worker data; later keys win (jsonb `||`). */
export async function mergeWorkerData(
  db: Db,
  memberId: number,
  data: JsonObject,
): Promise<BatchMember | undefined> {
  return db
    .updateTable("batchMembers")
    .set({ workerDataJson: sql<JsonObject>`worker_data_json || ${jsonb(data)}` })
    .where("id", "=", memberId)
    .returningAll()
    .executeTakeFirst();
}
