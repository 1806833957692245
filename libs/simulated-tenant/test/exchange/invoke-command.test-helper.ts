import type { SimulatedTenant } from "../../src/simulated-tenant.ts";

export interface InvokeAnswer {
  readonly status: number;
  /** Tests inspect arbitrary JSON answers, as in the *.test.ts files that use this helper. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
  /** The exception type of an error answer (`<ErrorId>|<type>|<text>` in `error.details[0].message`). */
  readonly exceptionType: string | undefined;
  /** The text of that string: what the cmdlet said. */
  readonly text: string | undefined;
}

/** Posts one cmdlet to the simulator as the Exchange admin API client does (tests only). */
export async function invokeCommand(
  tenant: SimulatedTenant,
  cmdlet: string,
  parameters: Record<string, unknown> = {},
  options: { url?: string; headers?: Record<string, string> } = {},
): Promise<InvokeAnswer> {
  const response = await fetch(
    options.url ?? `${tenant.url}/adminapi/beta/${tenant.tenantId}/InvokeCommand`,
    {
      method: "POST",
      headers: { Authorization: "Bearer test", "Content-Type": "application/json", ...options.headers },
      body: JSON.stringify({ CmdletInput: { CmdletName: cmdlet, Parameters: parameters } }),
    },
  );
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const body = (await response.json()) as any;
  const typed: unknown = body?.error?.details?.[0]?.message;
  const parts = typeof typed === "string" ? typed.split("|") : [];
  return {
    status: response.status,
    body,
    exceptionType: parts[1],
    text: parts.length >= 3 ? parts.slice(2).join("|") : undefined,
  };
}
