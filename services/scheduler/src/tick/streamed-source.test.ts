import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "@matoolkit/db";
import { DataSourceError, type DataRow, type DataSourceClient } from "@matoolkit/datasources";
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
 * The tick stages a data source's rows as the source yields them (a Databricks result of any
 * size is never held whole), inside the one sync transaction: a source failing mid-stream, or a
 * bad row, leaves nothing written and stops the source.
 */
let harness: SchedulerHarness;
const now = at("2030-06-01T12:00:00Z");
const dates = ["2030-06-10T09:00:00.000Z", "2030-06-12T09:00:00.000Z", "2030-06-20T09:00:00.000Z"];

beforeAll(async () => {
  harness = await startSchedulerHarness();
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  await deactivateAllRunbooks(harness.db);
});

const member = (index: number): DataRow => ({
  UserPrincipalName: `m${index}@contoso.test`,
  DisplayName: `Member ${index}`,
  MigrationDate: dates[index % dates.length],
  ProxyAddresses: `smtp:m${index}@contoso.test`,
});

/** A source that only streams: a tick collecting the whole result first fails. */
function streamingSource(rows: () => AsyncGenerator<DataRow>): DataSourceClient {
  return {
    rows,
    query: () => Promise.reject(new Error("the tick must stream the source's rows")),
    accessProblems: async () => [],
  };
}

async function tick(dataSources: DataSourceClient, name: string): Promise<RunbookOutcome> {
  const logger = createLogger({ level: "silent", name: "scheduler-test" });
  const outcomes = await runSchedulerTick({ db: harness.db, logger, dataSources }, now);
  const outcome = outcomes.find((candidate) => candidate.runbookName === name);
  if (outcome === undefined) throw new Error(`runbook ${name} was not processed`);
  return outcome;
}

/** Other sessions of this database inside a transaction that has written (the tick's sync). */
async function writingTransactions(db: Db): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    SELECT count(*)::int AS count FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
  `.execute(db);
  return rows[0]?.count ?? 0;
}

describe("a tick over a streamed source", () => {
  it("stages rows while the source is still yielding, and writes nothing when it fails mid-stream", async () => {
    const { db } = harness;
    await publish(db, { name: "fails-mid-stream" });
    const seen: number[] = [];
    const source = streamingSource(async function* () {
      seen.push(await writingTransactions(db));
      for (let index = 0; index < 3_000; index++) yield member(index);
      seen.push(await writingTransactions(db));
      throw new DataSourceError("databricks", "result chunk 2: HTTP 500 from the result download");
    });

    const outcome = await tick(source, "fails-mid-stream");

    // No transaction is open while the source starts; the sync's is, and has written, mid-stream.
    expect(seen).toEqual([0, 1]);
    expect(outcome).toMatchObject({
      ok: false,
      error: "datasource.failed: databricks source: result chunk 2: HTTP 500 from the result download",
    });
    expect(await batchesOf(db, "fails-mid-stream")).toEqual([]);
    expect(await takeOutbox(db)).toEqual([]);
  });

  it("stops the source when a row cannot be staged, and writes nothing", async () => {
    const { db } = harness;
    await publish(db, { name: "bad-row-mid-stream" });
    let yielded = 0;
    let stopped = false;
    const source = streamingSource(async function* () {
      try {
        for (let index = 0; index < 10_000; index++) {
          yielded += 1;
          yield index === 2_600 ? { ...member(index), UserPrincipalName: "" } : member(index);
        }
      } finally {
        stopped = true;
      }
    });

    const outcome = await tick(source, "bad-row-mid-stream");

    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.ok ? "" : outcome.error).toContain('row 2601: primary key column "UserPrincipalName"');
    expect(stopped).toBe(true);
    expect(yielded).toBe(2_601);
    expect(await batchesOf(db, "bad-row-mid-stream")).toEqual([]);
  });

  it("puts a stream of many rows through one tick", async () => {
    const { db } = harness;
    await publish(db, { name: "many-rows" });
    const total = 12_000;
    const source = streamingSource(async function* () {
      for (let index = 0; index < total; index++) yield member(index);
    });

    const outcome = await tick(source, "many-rows");

    expect(outcome).toMatchObject({ ok: true, sourceRows: total });
    const batches = await batchesOf(db, "many-rows");
    expect(batches.map((batch) => batch.batchStartTime?.toISOString())).toEqual(dates);
    const members = await Promise.all(batches.map((batch) => membersOf(db, batch.id)));
    expect(members.map((each) => each.length)).toEqual([4_000, 4_000, 4_000]);
    expect(members[0]?.[0]?.dataJson).toMatchObject({ UserPrincipalName: "m0@contoso.test" });
  });
});
