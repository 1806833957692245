import { createTestDatabase, type TestDatabase } from "@matoolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "./connection.ts";
import { listEvents } from "./events.repository.ts";
import {
  getMember,
  insertMembers,
  listMembers,
  mergeWorkerData,
  transitionMember,
} from "./members.repository.ts";
import { seedBatch } from "../test/test-fixtures.ts";

let testDb: TestDatabase;
let db: Db;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.db;
});
afterAll(async () => {
  await testDb.drop();
});

describe("members", () => {
  it("stores member data verbatim and skips keys already active in the batch", async () => {
    const { batch } = await seedBatch(db, 0);
    const data = {
      UserPrincipalName: "a@contoso.com",
      source_upn: "a@fabrikam.com",
      Nested: { inner_key: [1, 2] },
    };
    const inserted = await insertMembers(db, batch.id, [{ memberKey: "a", data }]);
    expect(inserted).toHaveLength(1);
    expect(inserted[0]).toMatchObject({
      memberKey: "a",
      status: "active",
      dataJson: data,
      workerDataJson: {},
    });
    const again = await insertMembers(db, batch.id, [
      { memberKey: "a", data },
      { memberKey: "b", data: {} },
    ]);
    expect(again.map((member) => member.memberKey)).toEqual(["b"]);
    expect((await listMembers(db, batch.id)).map((member) => member.memberKey)).toEqual(["a", "b"]);
  });

  it("keeps skipping active keys once the insert is a prepared statement with a generic plan", async () => {
    const { batch } = await seedBatch(db, 0);
    // One connection: from the sixth execution PostgreSQL may plan the prepared statement
    // without its parameters, and the ON CONFLICT arbiter (a partial unique index) must still match.
    await db.connection().execute(async (connection) => {
      for (let round = 0; round < 8; round += 1) {
        const added = await insertMembers(connection, batch.id, [
          { memberKey: "same", data: {} },
          { memberKey: `new-${round}`, data: {} },
        ]);
        expect(added.map((member) => member.memberKey)).toEqual(
          round === 0 ? ["same", "new-0"] : [`new-${round}`],
        );
      }
    });
  });

  it("fails or removes an active member once, stamping when", async () => {
    const { batch, members } = await seedBatch(db, 2);
    const failed = await transitionMember(db, members[0]!.id, "fail", { reason: "step.failed" });
    expect(failed?.status).toBe("failed");
    expect(failed?.failedAt).toBeInstanceOf(Date);
    expect(await transitionMember(db, members[0]!.id, "fail")).toBeUndefined();
    expect(await transitionMember(db, members[0]!.id, "remove")).toBeUndefined();
    expect((await transitionMember(db, members[1]!.id, "remove"))?.removedAt).toBeInstanceOf(Date);

    const events = (await listEvents(db, batch.id, { limit: 10 })).filter(
      (event) => event.entity === "member",
    );
    expect(events.map((event) => [event.entityId, event.fromStatus, event.toStatus, event.reason])).toEqual([
      [members[0]!.id, "active", "failed", "step.failed"],
      [members[1]!.id, "active", "removed", null],
    ]);
  });

  it("merges worker output into the member's worker data, later keys winning", async () => {
    const { members } = await seedBatch(db, 1);
    const id = members[0]!.id;
    await mergeWorkerData(db, id, { MailboxGuid: "g-1", target_id: "t-1" });
    const merged = await mergeWorkerData(db, id, { MailboxGuid: "g-2", Items: ["x"] });
    expect(merged?.workerDataJson).toEqual({ MailboxGuid: "g-2", target_id: "t-1", Items: ["x"] });
    expect((await getMember(db, id))?.workerDataJson).toEqual(merged?.workerDataJson);
  });
});
