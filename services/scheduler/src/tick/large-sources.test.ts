import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setAutomationEnabled } from "@matoolkit/db";
import type { DataRow, DataSourceClient } from "@matoolkit/datasources";
import { createLogger } from "@matoolkit/runtime";
import {
  at,
  batchesOf,
  deactivateAllRunbooks,
  membersOf,
  publish,
  startSchedulerHarness,
  takeOutbox,
  type SchedulerHarness,
} from "../../test/test-support.ts";
import { runSchedulerTick, type RunbookOutcome } from "./run-scheduler-tick.ts";

/**
 * Sources larger than one staging chunk (10,000 rows): the tick stages and diffs them a chunk at
 * a time, so what one chunk holds (a repeated key's first row, a batch's first row) must still
 * count for the rows of later chunks, and the answers must be those of a tick reading everything
 * at once.
 */
let harness: SchedulerHarness;
const now = at("2030-06-01T12:00:00Z");
const T1 = "2030-06-10T09:00:00.000Z";
const T2 = "2030-06-12T09:00:00.000Z";

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
  harness.lifecycleCalls.length = 0;
});

const member = (index: number, date = T1, name = `Member ${index}`): DataRow => ({
  UserPrincipalName: `m${index}@contoso.test`,
  DisplayName: name,
  MigrationDate: date,
  ProxyAddresses: `smtp:m${index}@contoso.test`,
});

/** A source yielding `rows()` one at a time, and counting how many it yielded. */
function streamingSource(rows: () => Iterable<DataRow>) {
  const state = { yielded: 0, stopped: false };
  const client: DataSourceClient = {
    async *rows() {
      try {
        for (const row of rows()) {
          state.yielded += 1;
          yield row;
        }
      } finally {
        state.stopped = true;
      }
    },
    query: () => Promise.reject(new Error("the tick must stream the source's rows")),
    accessProblems: async () => [],
  };
  return { client, state };
}

function* range(from: number, to: number, row: (index: number) => DataRow = (index) => member(index)) {
  for (let index = from; index < to; index++) yield row(index);
}

async function tick(dataSources: DataSourceClient, name: string, when = now): Promise<RunbookOutcome> {
  const logger = createLogger({ level: "silent", name: "scheduler-test" });
  const lifecycle = {
    batchCreated: async (batchId: number) => void harness.lifecycleCalls.push(`created:${batchId}`),
    phasesChanged: async () => undefined,
  };
  const outcomes = await runSchedulerTick({ db: harness.db, logger, dataSources, lifecycle }, when);
  const outcome = outcomes.find((candidate) => candidate.runbookName === name);
  if (outcome === undefined) throw new Error(`runbook ${name} was not processed`);
  return outcome;
}

describe("a source larger than a staging chunk", () => {
  it("finds a key repeated across chunks, names both rows, stops the source and writes nothing", async () => {
    const { db } = harness;
    await publish(db, { name: "repeated-across-chunks" });
    const source = streamingSource(function* () {
      yield* range(0, 10_499);
      yield member(2);
      yield* range(20_000, 21_000);
    });

    const outcome = await tick(source.client, "repeated-across-chunks");

    expect(outcome).toEqual({
      runbookName: "repeated-across-chunks",
      ok: false,
      error:
        'member_data.invalid: rows 3 and 10500 have the same value in primary key column "UserPrincipalName"',
    });
    expect(source.state).toEqual({ yielded: 10_500, stopped: true });
    expect(await batchesOf(db, "repeated-across-chunks")).toEqual([]);
    expect(await takeOutbox(db)).toEqual([]);
  });

  it("finds a key repeated within the chunk not yet written", async () => {
    const { db } = harness;
    await publish(db, { name: "repeated-in-chunk" });
    const source = streamingSource(function* () {
      yield* range(0, 3);
      yield member(0, T2);
      yield* range(3, 50);
    });

    const outcome = await tick(source.client, "repeated-in-chunk");

    expect(outcome).toMatchObject({
      ok: false,
      error:
        'member_data.invalid: rows 1 and 4 have the same value in primary key column "UserPrincipalName"',
    });
    expect(source.state.yielded).toBe(4);
    expect(await batchesOf(db, "repeated-in-chunk")).toEqual([]);
  });

  it("diffs members across chunks: joiners, leavers and changed data wherever their rows fall", async () => {
    const { db } = harness;
    const name = "diff-across-chunks";
    await publish(db, { name });
    const first = await tick(streamingSource(() => range(0, 12_000)).client, name);
    expect(first).toMatchObject({ ok: true, sourceRows: 12_000, createdBatchIds: [expect.any(Number)] });
    const [batch] = await batchesOf(db, name);
    expect(await membersOf(db, batch!.id)).toHaveLength(12_000);
    expect(await takeOutbox(db)).toEqual([]);

    // Leavers in both chunks (100..199 and 11,000..11,099), changed names in the second chunk
    // (10,500..10,509), joiners at the end (12,000..12,049).
    const changed = (index: number) =>
      member(index, T1, index >= 10_500 && index < 10_510 ? `Renamed ${index}` : `Member ${index}`);
    const second = await tick(
      streamingSource(function* () {
        yield* range(0, 100, changed);
        yield* range(200, 11_000, changed);
        yield* range(11_100, 12_050, changed);
      }).client,
      name,
      at("2030-06-01T12:05:00Z"),
    );

    expect(second).toMatchObject({
      ok: true,
      sourceRows: 11_850,
      createdBatchIds: [],
      membersAdded: 50,
      membersRemoved: 200,
      membersRefreshed: 10,
    });
    const members = await membersOf(db, batch!.id);
    const byKey = new Map(members.map((m) => [m.memberKey, m]));
    expect(byKey.get("m150@contoso.test")?.status).toBe("removed");
    expect(byKey.get("m11050@contoso.test")?.status).toBe("removed");
    expect(byKey.get("m10505@contoso.test")?.dataJson).toMatchObject({ DisplayName: "Renamed 10505" });
    expect(byKey.get("m12049@contoso.test")).toMatchObject({ status: "active" });
    const messages = await takeOutbox(db);
    // Removals first, then additions, each in member id order.
    expect(messages.map((message) => message.type)).toEqual([
      ...Array<string>(200).fill("member-removed"),
      ...Array<string>(50).fill("member-added"),
    ]);
    expect(new Set(messages.map((message) => message.messageId)).size).toBe(250);
    expect(messages.at(-1)?.body).toEqual({
      BatchId: batch!.id,
      MemberKey: "m12049@contoso.test",
      BatchMemberId: byKey.get("m12049@contoso.test")?.id,
    });

    // The same rows again: nothing to do.
    const third = await tick(
      streamingSource(function* () {
        yield* range(0, 100, changed);
        yield* range(200, 11_000, changed);
        yield* range(11_100, 12_050, changed);
      }).client,
      name,
      at("2030-06-01T12:10:00Z"),
    );
    expect(third).toMatchObject({ ok: true, membersAdded: 0, membersRemoved: 0, membersRefreshed: 0 });
    expect(await takeOutbox(db)).toEqual([]);
  });

  it("removes every member of a source that comes back empty, one member-removed each", async () => {
    const { db } = harness;
    const name = "emptied";
    await publish(db, { name });
    await tick(streamingSource(() => range(0, 2_500)).client, name);
    const [batch] = await batchesOf(db, name);

    const outcome = await tick(streamingSource(() => []).client, name, at("2030-06-01T12:05:00Z"));

    expect(outcome).toMatchObject({ ok: true, sourceRows: 0, membersRemoved: 2_500 });
    const members = await membersOf(db, batch!.id);
    expect(members.every((m) => m.status === "removed")).toBe(true);
    const messages = await takeOutbox(db);
    expect(messages.map((message) => message.messageId)).toEqual(
      members.map((m) => `member-removed:${m.id}`),
    );
  });

  it("creates a batch as its first row arrives, and reports new batches in start time order", async () => {
    const { db } = harness;
    const name = "later-first";
    await publish(db, { name });
    // The later batch time comes first, in the first chunk; the earlier one only in the second.
    const outcome = await tick(
      streamingSource(function* () {
        yield* range(0, 10_500, (index) => member(index, T2));
        yield* range(10_500, 11_000, (index) => member(index, T1));
      }).client,
      name,
    );

    const batches = await batchesOf(db, name);
    expect(batches.map((batch) => batch.batchStartTime?.toISOString())).toEqual([T1, T2]);
    const [early, late] = batches;
    expect(outcome).toMatchObject({ ok: true, createdBatchIds: [early!.id, late!.id] });
    expect(harness.lifecycleCalls).toEqual([`created:${early!.id}`, `created:${late!.id}`]);
    expect(await membersOf(db, early!.id)).toHaveLength(500);
    expect(await membersOf(db, late!.id)).toHaveLength(10_500);
  });

  it("with automation off, syncs the batches in flight and only counts the rows of new batch times", async () => {
    const { db } = harness;
    const name = "switched-off-large";
    await publish(db, { name });
    await tick(streamingSource(() => range(0, 100)).client, name);
    await takeOutbox(db);
    await setAutomationEnabled(db, { runbookName: name, enabled: false, actor: "admin", at: now });

    const outcome = await tick(
      streamingSource(function* () {
        yield* range(0, 100);
        yield* range(100, 10_600, (index) => member(index, T2));
        yield member(10_600);
      }).client,
      name,
      at("2030-06-01T12:05:00Z"),
    );

    expect(outcome).toMatchObject({
      ok: true,
      automationEnabled: false,
      createdBatchIds: [],
      groupsNotCreated: 1,
      membersAdded: 1,
      membersRemoved: 0,
    });
    expect(await batchesOf(db, name)).toHaveLength(1);
  });
});
