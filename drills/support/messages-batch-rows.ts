import pg from "pg";
import type { BatchRows } from "./messages-catalogue.ts";

/** The ids of one batch's rows, so forged messages can name them. */
export async function readBatchRows(url: string, batchId: number): Promise<BatchRows> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const ids = async (sql: string) =>
      (await client.query<{ id: number }>(sql, [batchId])).rows.map((row) => Number(row.id));
    const members = await client.query<{ id: number; member_key: string }>(
      "SELECT id, member_key FROM batch_members WHERE batch_id = $1 ORDER BY id",
      [batchId],
    );
    const phases = await ids("SELECT id FROM phase_executions WHERE batch_id = $1 ORDER BY id");
    return {
      batchId,
      phaseExecutionId: phases[0] ?? 0,
      memberIds: members.rows.map((row) => Number(row.id)),
      memberKeys: members.rows.map((row) => row.member_key),
      stepIds: await ids("SELECT id FROM step_executions WHERE batch_id = $1 ORDER BY id"),
    };
  } finally {
    await client.end();
  }
}

export async function succeededSteps(url: string, batchId: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM step_executions WHERE batch_id = $1 AND status = 'succeeded'",
      [batchId],
    );
    return result.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}
