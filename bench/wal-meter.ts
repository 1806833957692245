import pg from "pg";

/**
 * WAL written during a measurement (issue 29: "≤ 3 kB of WAL per step"), on the whole server.
 *
 * - Bytes: the difference of `pg_current_wal_insert_lsn()` between start and stop (exact; every
 *   database of the server counts, so run it on a quiet server).
 * - Records (and the optional breakdown): `pg_walinspect` (a contrib extension of PostgreSQL
 *   ≥ 15, https://www.postgresql.org/docs/15/pgwalinspect.html) reads the WAL of exactly that
 *   range, so the figure does not depend on when backends flush their statistics. A TEMPORARY
 *   physical replication slot (`pg_create_physical_replication_slot(name, true, true)`,
 *   https://www.postgresql.org/docs/15/functions-admin.html#FUNCTIONS-REPLICATION) keeps that WAL
 *   from being recycled by a checkpoint during the run; it belongs to the admin session and
 *   PostgreSQL drops it when that session ends, however the bench ends.
 * - Where pg_walinspect cannot be installed (not a superuser, no contrib package), records come
 *   from the `pg_stat_wal` view (PostgreSQL ≥ 14), which backends update when they flush their
 *   statistics (at most every second, up to 10 s when idle): approximate, and labelled so.
 *
 * The extension is created in the bench's own database (in a schema of its own), which the bench
 * drops at the end: nothing is left on the server.
 */
export interface WalUse {
  readonly bytes: number;
  readonly records: number;
  /** Full-page images among `bytes` (first change of a page after a checkpoint). */
  readonly fpiBytes: number;
  readonly source: "pg_walinspect" | "pg_stat_wal (approximate)";
}

export interface WalRelationUse {
  /** `step_executions`, `step_executions_job_id_idx (index of step_executions)`, or what has no relation. */
  readonly relation: string;
  readonly records: number;
  readonly bytes: number;
  /** Record types and their counts, e.g. `UPDATE 20000, HOT_UPDATE 0`. */
  readonly types: ReadonlyArray<{ readonly type: string; readonly count: number }>;
}

export interface WalMeasurement {
  /** Ends the range now. */
  stop(): Promise<WalUse>;
  /** WAL of the range by relation of the bench's database, largest first (reads every record: slow). */
  byRelation(): Promise<WalRelationUse[]>;
  /** Drops the slot (also dropped when the admin session ends). */
  release(): Promise<void>;
}

const inspectSchema = "bench_walinspect";

/**
 * `admin`: a superuser session on the server (any database) that stays open until `release`.
 * `benchDatabaseUrl`: the bench's own database, where the extension is created.
 */
export async function startWalMeasurement(
  admin: pg.Client,
  benchDatabaseUrl: string,
  warn: (line: string) => void,
): Promise<WalMeasurement> {
  const inspect = new pg.Client({ connectionString: benchDatabaseUrl });
  await inspect.connect();
  const slot = `matoolkit_bench_${process.pid}_${Date.now()}`;
  let inspectable = true;
  try {
    await inspect.query(`CREATE SCHEMA IF NOT EXISTS ${inspectSchema}`);
    await inspect.query(`CREATE EXTENSION IF NOT EXISTS pg_walinspect SCHEMA ${inspectSchema}`);
    await admin.query("SELECT pg_create_physical_replication_slot($1, true, true)", [slot]);
  } catch (error) {
    inspectable = false;
    warn(
      `WAL records from pg_stat_wal, approximate (pg_walinspect or a temporary slot unavailable: ${String(error)})`,
    );
  }
  const startLsn = await currentLsn(admin);
  const startStats = await walStats(admin);
  let endLsn: string | undefined;

  const requireEnd = (): string => {
    if (endLsn === undefined) throw new Error("WAL measurement: stop() first");
    return endLsn;
  };

  return {
    async stop() {
      endLsn = await currentLsn(admin);
      const bytes = Number(
        (await admin.query<{ d: string }>("SELECT pg_wal_lsn_diff($1, $2)::text AS d", [endLsn, startLsn]))
          .rows[0]!.d,
      );
      if (inspectable) {
        await waitForFlush(admin, endLsn);
        const totals = await inspect.query<{ records: string; fpi: string }>(
          `SELECT coalesce(sum(count), 0)::text AS records, coalesce(sum(fpi_size), 0)::text AS fpi
           FROM ${inspectSchema}.pg_get_wal_stats($1, $2)`,
          [startLsn, endLsn],
        );
        return {
          bytes,
          records: Number(totals.rows[0]!.records),
          fpiBytes: Number(totals.rows[0]!.fpi),
          source: "pg_walinspect",
        };
      }
      const endStats = await walStats(admin);
      return {
        bytes,
        records: endStats.records - startStats.records,
        fpiBytes: Number.NaN,
        source: "pg_stat_wal (approximate)",
      };
    },

    async byRelation() {
      const end = requireEnd();
      if (!inspectable) return [];
      const database = (
        await inspect.query<{ oid: string }>(
          "SELECT oid::text FROM pg_database WHERE datname = current_database()",
        )
      ).rows[0]!.oid;
      // A record is counted for the first block it changes (records touching several relations are
      // rare on this path: a heap update's two blocks are of the same relation).
      const grouped = await inspect.query<{
        db: string | null;
        filenode: string | null;
        rm: string;
        type: string;
        n: string;
        bytes: string;
      }>(
        `SELECT ref[1] AS db, ref[2] AS filenode, rm, type, count(*)::text AS n, sum(len)::text AS bytes
         FROM (SELECT regexp_match(block_ref, 'rel \\d+/(\\d+)/(\\d+)') AS ref, resource_manager AS rm,
                      record_type AS type, record_length AS len
               FROM ${inspectSchema}.pg_get_wal_records_info($1, $2)) AS r
         GROUP BY 1, 2, 3, 4`,
        [startLsn, end],
      );
      const names = new Map(
        (
          await inspect.query<{ filenode: string; name: string }>(
            `SELECT pg_relation_filenode(c.oid)::text AS filenode,
                    CASE WHEN c.relkind = 'i' THEN c.relname || ' (index of ' || t.relname || ')'
                         WHEN c.relkind = 't' THEN 'toast of ' || coalesce(o.relname, c.relname)
                         ELSE c.relname END AS name
             FROM pg_class c
             LEFT JOIN pg_index i ON i.indexrelid = c.oid
             LEFT JOIN pg_class t ON t.oid = i.indrelid
             LEFT JOIN pg_class o ON o.reltoastrelid = c.oid
             WHERE pg_relation_filenode(c.oid) IS NOT NULL`,
          )
        ).rows.map((row) => [row.filenode, row.name]),
      );
      const byRelation = new Map<string, { records: number; bytes: number; types: Map<string, number> }>();
      for (const row of grouped.rows) {
        const relation =
          row.db === null
            ? `(no relation) ${row.rm}`
            : row.db !== database
              ? row.db === "0"
                ? "(shared catalogs)"
                : "(other databases)"
              : (names.get(row.filenode!) ?? `(relfilenode ${row.filenode}, gone)`);
        const entry = byRelation.get(relation) ?? { records: 0, bytes: 0, types: new Map<string, number>() };
        entry.records += Number(row.n);
        entry.bytes += Number(row.bytes);
        const type = `${row.rm === "Heap" || row.rm === "Heap2" || row.rm === "Btree" ? "" : `${row.rm}:`}${row.type}`;
        entry.types.set(type, (entry.types.get(type) ?? 0) + Number(row.n));
        byRelation.set(relation, entry);
      }
      return [...byRelation]
        .map(([relation, { records, bytes, types }]) => ({
          relation,
          records,
          bytes,
          types: [...types].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count),
        }))
        .sort((a, b) => b.bytes - a.bytes);
    },

    async release() {
      if (inspectable) {
        await admin
          .query("SELECT pg_drop_replication_slot($1)", [slot])
          .catch((error: unknown) =>
            warn(`could not drop slot ${slot} (it goes with the session): ${String(error)}`),
          );
      }
      await inspect.end();
    },
  };
}

async function currentLsn(admin: pg.Client): Promise<string> {
  return (await admin.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")).rows[0]!.lsn;
}

/**
 * pg_walinspect reads only flushed WAL (it refuses an end past `pg_current_wal_flush_lsn()`); the
 * WAL writer flushes within `wal_writer_delay` (200 ms by default), a commit at once.
 */
async function waitForFlush(admin: pg.Client, lsn: string): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 100) {
    const flushed = await admin.query<{ ok: boolean }>(
      "SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok",
      [lsn],
    );
    if (flushed.rows[0]!.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`WAL up to ${lsn} still not flushed after 10 s`);
}

async function walStats(admin: pg.Client): Promise<{ records: number }> {
  const row = (await admin.query<{ records: string }>("SELECT wal_records::text AS records FROM pg_stat_wal"))
    .rows[0];
  return { records: Number(row?.records ?? Number.NaN) };
}
