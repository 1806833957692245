import { publishRunbook, type Db } from "@matoolkit/db";
import { sql } from "kysely";

/**
 * Seeds FINISHED batches for the read-models benchmark with set-based SQL (INSERT … SELECT over
 * generate_series): a batch of 10,000 members × 5 steps is a few statements and seconds, where
 * driving the orchestrator would take minutes. The rows look like what a real run leaves behind:
 * the batch and its phases completed, every member active with its data and its steps' outputs,
 * every step succeeded with params, job id, result and timestamps, and the events each guarded
 * transition writes (batch created/activated/completed, phase dispatched/completed, step
 * dispatched/[polling/]succeeded, plus a failed attempt and its retry for one member in ten).
 */
export interface SeedShape {
  readonly members: number;
  /** Steps per member in each phase. */
  readonly steps: number;
  readonly phases: number;
  /**
   * `completed` (a finished batch), or `active`: the same rows, but the batch not marked ended yet,
   * so the admin API cannot keep its member counts and aggregates them on every read.
   */
  readonly batchStatus: "completed" | "active";
}

export interface SeededBatch {
  readonly batchId: number;
  readonly steps: number;
  readonly events: number;
  /** The id of the event at this fraction of the batch's timeline: a deep page's afterId. */
  readonly eventIdAt: (fraction: number) => Promise<number>;
}

const RUNBOOK_NAME = "read-bench";

export async function publishBenchRunbook(db: Db, shape: SeedShape): Promise<number> {
  const phases = Array.from({ length: shape.phases }, (_, phase) => {
    const steps = Array.from(
      { length: shape.steps },
      (_, step) =>
        `      - name: step-${step}\n        worker_id: worker-01\n        function: Test-Echo\n` +
        `        params:\n          Identity: "{{UserPrincipalName}}"\n`,
    ).join("");
    return `  - name: phase-${phase}\n    offset: T-${shape.phases - phase}d\n    steps:\n${steps}`;
  }).join("");
  const yaml =
    `name: ${RUNBOOK_NAME}\n` +
    "data_source:\n  type: csv\n  path: members.csv\n  primary_key: UserPrincipalName\n" +
    `  batch_time: immediate\nphases:\n${phases}`;
  const runbook = await publishRunbook(db, {
    name: RUNBOOK_NAME,
    yamlContent: yaml,
    overdueBehavior: "rerun",
    rerunInit: false,
  });
  return runbook.id;
}

/** One finished batch of `shape`; call it again for the other batches a real database holds. */
export async function seedFinishedBatch(db: Db, runbookId: number, shape: SeedShape): Promise<SeededBatch> {
  const { id: batchId } = await sql<{ id: number }>`
    INSERT INTO batches (runbook_id, status, detected_at, is_manual, created_by, current_phase)
    VALUES (${runbookId}, ${shape.batchStatus}, now() - interval '2 days', true, 'bench@example.test',
            ${`phase-${shape.phases - 1}`})
    RETURNING id
  `
    .execute(db)
    .then((result) => result.rows[0]!);

  await sql`
    INSERT INTO phase_executions (batch_id, phase_name, sequence, offset_minutes, runbook_version,
      status, dispatched_at, completed_at)
    SELECT ${batchId}, 'phase-' || p, p, -1440 * (${shape.phases} - p), 1, 'completed',
      now() - interval '2 days' + p * interval '4 hours',
      now() - interval '2 days' + p * interval '4 hours' + interval '3 hours'
    FROM generate_series(0, ${shape.phases - 1}) AS p
  `.execute(db);

  // A member's data source row and what its steps wrote back, at the sizes real CSVs give.
  await sql`
    INSERT INTO batch_members (batch_id, member_key, data_json, worker_data_json, status, added_at)
    SELECT ${batchId}, format('user%s@contoso.test', g),
      jsonb_build_object(
        'UserPrincipalName', format('user%s@contoso.test', g),
        'DisplayName', format('User Number %s', g),
        'Department', (ARRAY['Sales', 'Finance', 'Engineering', 'Legal', 'Operations'])[1 + g % 5],
        'MigrationDate', '2026-11-24',
        'TargetEmail', format('user%s@fabrikam.test', g),
        'ProxyAddresses', jsonb_build_array(format('SMTP:user%s@contoso.test', g),
          format('smtp:u%s@contoso.test', g), format('smtp:user%s@contoso.onmicrosoft.com', g))),
      jsonb_build_object('NotifiedAddress', format('user%s@contoso.test', g),
        'TargetObjectId', md5(g::text)::uuid),
      'active', now() - interval '2 days'
    FROM generate_series(1, ${shape.members}) AS g
  `.execute(db);

  // A phase-due inserts a phase's steps member by member, step index by step index.
  const steps = await sql`
    INSERT INTO step_executions (batch_id, phase_execution_id, batch_member_id, step_name, step_index,
      worker_id, function_name, params_json, params_resolved, status, job_id, result_json,
      dispatched_at, completed_at, is_poll_step, poll_interval_sec, poll_timeout_sec, poll_started_at,
      last_polled_at, poll_count, on_failure, retry_count, max_retries, retry_interval_sec,
      timeout_sec, created_at)
    SELECT ${batchId}, p.id, m.id, 'step-' || s, s, 'worker-01', 'Test-Echo',
      jsonb_build_object('Identity', m.member_key, 'Subject', 'Your mailbox moves on 2026-11-24'),
      true, 'succeeded', gen_random_uuid()::text,
      jsonb_build_object('complete', true, 'output', jsonb_build_object('Identity', m.member_key)),
      p.dispatched_at + s * interval '10 minutes',
      p.dispatched_at + s * interval '10 minutes' + interval '20 seconds',
      s % 2 = 1, CASE WHEN s % 2 = 1 THEN 30 END, CASE WHEN s % 2 = 1 THEN 3600 END,
      CASE WHEN s % 2 = 1 THEN p.dispatched_at + s * interval '10 minutes' + interval '1 second' END,
      CASE WHEN s % 2 = 1 THEN p.dispatched_at + s * interval '10 minutes' + interval '19 seconds' END,
      CASE WHEN s % 2 = 1 THEN 2 ELSE 0 END,
      CASE WHEN s = 0 THEN 'alert-admins' END,
      CASE WHEN s = 0 AND m.id % 10 = 0 THEN 1 ELSE 0 END, 1, 60, 600,
      p.dispatched_at
    FROM phase_executions p
    JOIN batch_members m ON m.batch_id = p.batch_id
    CROSS JOIN generate_series(0, ${shape.steps - 1}) AS s
    WHERE p.batch_id = ${batchId}
    ORDER BY p.sequence, m.id, s
  `.execute(db);

  // Batch and phase transitions first, then the steps' in the order they happened (by step index,
  // then transition, then member: every member's step 0 is dispatched before any succeeds).
  await sql`
    INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, at)
    SELECT ${batchId}, 'batch', ${batchId}, t.from_status, t.to_status, t.reason, now() - interval '2 days'
    FROM (VALUES (1, NULL, 'detected', 'created'), (2, 'detected', 'active', 'advanced by operator'))
      AS t(n, from_status, to_status, reason)
    ORDER BY t.n
  `.execute(db);
  await sql`
    INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, at)
    SELECT ${batchId}, 'phase', p.id, 'pending', 'dispatched', NULL, p.dispatched_at
    FROM phase_executions p WHERE p.batch_id = ${batchId} ORDER BY p.sequence
  `.execute(db);
  await sql`
    INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, at)
    SELECT s.batch_id, 'step', s.id, t.from_status, t.to_status, t.reason,
      s.dispatched_at + t.n * interval '1 second'
    FROM step_executions s
    JOIN (VALUES
        (1, 'pending', 'dispatched', NULL, 'retry'),
        (2, 'dispatched', 'failed', 'graph.throttled', 'retry'),
        (3, 'failed', 'pending', 'retry 1 of 1', 'retry'),
        (4, 'pending', 'dispatched', NULL, 'always'),
        (5, 'dispatched', 'polling', NULL, 'poll'),
        (6, 'polling', 'succeeded', NULL, 'poll'),
        (7, 'dispatched', 'succeeded', NULL, 'plain'))
      AS t(n, from_status, to_status, reason, applies)
      ON t.applies = 'always'
      OR (t.applies = 'retry' AND s.retry_count > 0)
      OR (t.applies = 'poll' AND s.is_poll_step)
      OR (t.applies = 'plain' AND NOT s.is_poll_step)
    WHERE s.batch_id = ${batchId}
    ORDER BY s.phase_execution_id, s.step_index, t.n, s.id
  `.execute(db);
  await sql`
    INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, at)
    SELECT ${batchId}, 'phase', p.id, 'dispatched', 'completed',
      format('%s of %s members succeeded', ${shape.members}::int, ${shape.members}::int), p.completed_at
    FROM phase_executions p WHERE p.batch_id = ${batchId} ORDER BY p.sequence
  `.execute(db);
  if (shape.batchStatus === "completed") {
    await sql`
      INSERT INTO events (batch_id, entity, entity_id, from_status, to_status, reason, at)
      VALUES (${batchId}, 'batch', ${batchId}, 'active', 'completed',
        ${`${shape.phases} of ${shape.phases} phases completed`}, now())
    `.execute(db);
  }

  const { n: events } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM events WHERE batch_id = ${batchId}`
    .execute(db)
    .then((result) => result.rows[0]!);
  return {
    batchId,
    steps: Number(steps.numAffectedRows ?? 0n),
    events,
    eventIdAt: async (fraction) => {
      const offset = Math.max(0, Math.floor(events * fraction) - 1);
      const row = await sql<{ id: number }>`
        SELECT id FROM events WHERE batch_id = ${batchId} ORDER BY id OFFSET ${offset} LIMIT 1
      `.execute(db);
      return Number(row.rows[0]!.id);
    },
  };
}
