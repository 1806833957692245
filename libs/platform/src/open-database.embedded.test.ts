import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { embeddedPasswordFile } from "@matoolkit/db";
import { createLogger } from "@matoolkit/runtime";
import { freePort } from "@matoolkit/testing";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./open-database.ts";
import { platformConfigFromEnv } from "./platform-config.ts";

/**
 * Issue 25, finding 1: the embedded PostgreSQL's superuser password is the data directory's own
 * secret. It goes into the connections' URL and nowhere else: not a log line at any level, not a
 * process's command line (which every local user can read with ps).
 */
const dataDir = mkdtempSync(join(tmpdir(), "matoolkit-open-embedded-"));
chmodSync(dataDir, 0o755); // as root the server runs as `postgres`, which must enter it
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("openDatabase in embedded mode", { timeout: 120_000 }, () => {
  it("keeps the superuser password out of every log line and every command line", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    const logger = createLogger({ level: "trace", name: "embedded-test", destination });
    const config = platformConfigFromEnv({
      MATOOLKIT_DATA_DIR: dataDir,
      MATOOLKIT_EMBEDDED_PG_PORT: String(await freePort()),
    });
    const database = await openDatabase(config, logger, "embedded-test", "none");
    try {
      const password = readFileSync(embeddedPasswordFile(join(dataDir, "postgres")), "utf8").trim();
      expect(decodeURIComponent(new URL(database.connectionString).password)).toBe(password);
      expect(lines.join("")).toContain("starting embedded PostgreSQL");
      expect(lines.filter((line) => line.includes(password))).toEqual([]);
      expect(commandLinesContaining(password)).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

/** Every process's command line that holds `text` (Linux's /proc; what `ps -ef` shows everyone). */
function commandLinesContaining(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/u.test(name))) {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (command.includes(text)) found.push(`${pid}: ${command}`);
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}
