import path from "node:path";
import { serializeAuthenticationRecord, type AuthenticationRecord } from "@azure/identity";
import { z } from "zod";
import { CliError, exitCodes } from "../../errors.ts";
import { readIfPresent, removeIfPresent, writePrivateFile } from "../../private-files.ts";

/** Which account the token cache belongs to; no secret, but kept as private as the cache. */
export function authRecordFile(stateDir: string): string {
  return path.join(stateDir, "matoolkit-cli.auth-record.json");
}

// AuthenticationRecord's documented members (serializeAuthenticationRecord writes them).
const authRecordSchema = z.object({
  authority: z.string().min(1),
  homeAccountId: z.string().min(1),
  clientId: z.string().min(1),
  tenantId: z.string().min(1),
  username: z.string(),
  version: z.string().optional(),
});

export async function saveAuthRecord(stateDir: string, record: AuthenticationRecord): Promise<void> {
  await writePrivateFile(authRecordFile(stateDir), `${serializeAuthenticationRecord(record)}\n`);
}

/** The saved account, or undefined when nobody signed in (or signed out). */
export async function loadAuthRecord(stateDir: string): Promise<AuthenticationRecord | undefined> {
  const file = authRecordFile(stateDir);
  const text = await readIfPresent(file);
  if (text === undefined) return undefined;
  try {
    return authRecordSchema.parse(JSON.parse(text));
  } catch {
    throw new CliError(
      exitCodes.failed,
      "auth.record_invalid",
      `the saved sign-in ${file} is damaged: run \`matoolkit auth logout\` then \`matoolkit auth login\``,
    );
  }
}

export async function removeAuthRecord(stateDir: string): Promise<boolean> {
  return removeIfPresent(authRecordFile(stateDir));
}
