// An example custom function (see docs/worker-and-tenant.md, "Custom functions"): copy this directory, point
// MATOOLKIT_FUNCTIONS_DIR at it, and call `Get-MigrationWave` from a runbook step like any
// standard function. Its `data` can feed later steps through output_params.
import { z } from "zod";
import { parseFunctionParams, type FunctionModule, type WorkerFunction } from "@matoolkit/worker";

// Runbook templates resolve to strings, so numbers arrive as text and are coerced.
const params = z.object({
  /** The member's cutover date/time, e.g. `{{_batch_start_time}}` or a data-source column. */
  CutoverDate: z.iso.datetime({ offset: true }).or(z.iso.date()),
  /** Label prefix, e.g. `Wave` or `EMEA`. */
  Prefix: z
    .string()
    .regex(/^[A-Za-z0-9]{1,16}$/, "letters and digits only, at most 16")
    .default("Wave"),
  /** Waves start on this weekday (1 = Monday … 7 = Sunday; ISO 8601). */
  WaveStartsOn: z.coerce.number().int().min(1).max(7).default(1),
});

/**
 * Labels the migration wave a member belongs to from its cutover date: waves are calendar weeks
 * starting on `WaveStartsOn` (UTC), named `<Prefix>-<first day of the wave>`, e.g.
 * `Wave-2025-03-10` for a cutover on Saturday 15 March 2025. Pure: no tenant call, so it also
 * works as a planning step before anything is migrated.
 */
const getMigrationWave: WorkerFunction = async (raw) => {
  const { CutoverDate, Prefix, WaveStartsOn } = parseFunctionParams("Get-MigrationWave", params, raw);
  const cutover = new Date(CutoverDate);
  const day = new Date(Date.UTC(cutover.getUTCFullYear(), cutover.getUTCMonth(), cutover.getUTCDate()));
  const isoWeekday = day.getUTCDay() === 0 ? 7 : day.getUTCDay();
  const daysIntoWave = (isoWeekday - WaveStartsOn + 7) % 7;
  const waveStart = new Date(day.getTime() - daysIntoWave * 86_400_000);
  const waveStartDate = waveStart.toISOString().slice(0, 10);
  return {
    complete: true,
    data: {
      Wave: `${Prefix}-${waveStartDate}`,
      WaveStart: waveStartDate,
      DayOfWave: daysIntoWave + 1,
    },
  };
};

export default { "Get-MigrationWave": getMigrationWave } satisfies FunctionModule;
