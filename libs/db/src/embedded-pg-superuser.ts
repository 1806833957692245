import pg from "pg";
import { scramVerifier } from "./embedded-pg-password.ts";

/** What every data directory made before issue 25 gave its superuser. Accepted only to replace it. */
export const LEGACY_PASSWORD = "matoolkit-embedded";

export interface SuperuserLogin {
  readonly port: number;
  readonly user: string;
  /** The password of the data directory's password file. */
  readonly password: string;
  readonly passwordFile: string;
  readonly dataDir: string;
}

/**
 * Makes sure the superuser's password is the one in the password file, on a running server.
 * A data directory from an earlier version still has the fixed legacy password: it is replaced
 * (over a connection made with it) by the file's password, once, and the legacy one stops working.
 * The file is written before the role changes, so a crash in between is finished on the next start.
 */
export async function secureSuperuser(login: SuperuserLogin): Promise<"current" | "replaced-legacy"> {
  const current = await tryLogin(login, login.password);
  if (current === "ok") return "current";
  if (current !== "refused") throw current;
  const legacy = await tryLogin(login, LEGACY_PASSWORD, async (client) => {
    // The verifier, not the password: the statement may be logged (log_statement, an error), the text never is.
    const verifier = scramVerifier(login.password);
    await client.query(
      `ALTER ROLE ${pg.escapeIdentifier(login.user)} PASSWORD ${pg.escapeLiteral(verifier)}`,
    );
  });
  if (legacy === "refused") {
    throw new Error(
      `the password in ${login.passwordFile} does not match the embedded PostgreSQL in ${login.dataDir} ` +
        `(was the file replaced, or the data directory copied without it?): restore the file, ` +
        `or move the data directory and the file away to start a new one, or set DATABASE_URL`,
    );
  }
  if (legacy !== "ok") throw legacy;
  const after = await tryLogin(login, login.password);
  if (after !== "ok") {
    throw new Error(`the embedded PostgreSQL superuser's password was changed but the new one is refused`);
  }
  return "replaced-legacy";
}

/** "ok", "refused" (wrong password), or the error that kept us from knowing. */
async function tryLogin(
  login: SuperuserLogin,
  password: string,
  then?: (client: pg.Client) => Promise<void>,
): Promise<"ok" | "refused" | Error> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: login.port,
    user: login.user,
    password,
    database: "postgres",
    connectionTimeoutMillis: 10_000,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    await then?.(client);
    return "ok";
  } catch (error) {
    if ((error as { code?: string }).code === "28P01") return "refused";
    // pg's errors never carry the password; say which step failed without the connection details.
    return new Error(
      `could not check the embedded PostgreSQL superuser's password: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}
