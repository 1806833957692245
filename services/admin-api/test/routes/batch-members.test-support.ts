import type { Db } from "@matoolkit/db";
import { expect } from "vitest";
import { z } from "zod";
import type { ApiHarness, ApiResponse } from "../api-test-harness.ts";

/**
 * Test support for the member routes' tests (not exported from the package): what a batch holds
 * in the three tables a member change writes, to prove a refused request wrote nothing.
 */
export interface BatchTables {
  readonly members: readonly { id: number; memberKey: string; status: string }[];
  readonly outbox: readonly { messageId: string; type: unknown; body: unknown }[];
  readonly events: number;
}

export async function tablesOf(db: Db, batchId: number): Promise<BatchTables> {
  const members = await db
    .selectFrom("batchMembers")
    .select(["id", "memberKey", "status"])
    .where("batchId", "=", batchId)
    .orderBy("id")
    .execute();
  const outbox = (await db.selectFrom("outbox").selectAll().orderBy("id").execute())
    .filter((row) => (row.body as { BatchId?: unknown }).BatchId === batchId)
    .map((row) => ({ messageId: row.messageId, type: row.properties.MessageType, body: row.body }));
  const { n } = await db
    .selectFrom("events")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("batchId", "=", batchId)
    .executeTakeFirstOrThrow();
  return { members, outbox, events: Number(n) };
}

/** Runs `request` and asserts it changed none of the batch's tables. */
export async function expectNothingWritten(
  harness: ApiHarness,
  batchId: number,
  request: () => Promise<ApiResponse>,
): Promise<ApiResponse> {
  const before = await tablesOf(harness.db, batchId);
  const response = await request();
  expect(await tablesOf(harness.db, batchId)).toEqual(before);
  return response;
}

export function expectProblem(response: ApiResponse, status: number, code: string, detail: RegExp): void {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status, code });
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(response.body.detail).toMatch(detail);
}

/**
 * The body is what the OpenAPI document describes: the response schema decodes it (every field
 * present, timestamps ISO strings) and encodes it back unchanged (no undocumented field).
 */
export function expectDocumentedBody(schema: z.ZodType, body: unknown): void {
  expect(z.encode(schema, schema.parse(body))).toEqual(body);
}
