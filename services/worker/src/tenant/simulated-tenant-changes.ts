import { z } from "zod";

/** One write the simulated tenant recorded (libs/simulated-tenant `TenantChange`), as it answers it. */
export const simulatedTenantChangeSchema = z.object({
  sequence: z.number().int(),
  at: z.string(),
  api: z.enum(["graph", "exchange"]),
  /** e.g. `PATCH /v1.0/users/{id}` or `Set-MailUser`. */
  operation: z.string(),
  /** The object written: a UPN, a group's name or a recipient's identity. */
  target: z.string(),
  /** What changed: property names and new values (never a password: the simulator records only that one was set). */
  detail: z.string(),
});
export type SimulatedTenantChange = z.infer<typeof simulatedTenantChangeSchema>;

/** Reads a simulated tenant's write log; only a simulated tenant has one. */
export type TenantChangeLog = () => Promise<readonly SimulatedTenantChange[]>;

/**
 * The change log of the simulated tenant at `url` (in this process or `npm run simulator`), read
 * from its `/_simulator/changes` endpoint each time: the rehearsal's record of what it wrote.
 */
export function simulatedTenantChangeLog(url: string, doFetch: typeof fetch = fetch): TenantChangeLog {
  return async () => {
    const response = await doFetch(`${url}/_simulator/changes`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`the simulated tenant at ${url} answered HTTP ${response.status}`);
    const parsed = z.object({ value: z.array(simulatedTenantChangeSchema) }).safeParse(await response.json());
    if (!parsed.success) throw new Error(`the simulated tenant at ${url} answered an unreadable change log`);
    return parsed.data.value;
  };
}
