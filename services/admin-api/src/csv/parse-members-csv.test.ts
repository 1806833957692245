import { describe, expect, it } from "vitest";
import { parseRunbookOrThrow } from "@matoolkit/domain";
import { testRunbookYaml } from "../../test/api-test-harness.ts";
import { CsvUpload } from "./csv-upload.ts";
import { parseMembersCsv } from "./parse-members-csv.ts";

/**
 * Issue 25, finding 4: a large upload is parsed in slices, so the event loop keeps serving
 * (health probes, other requests, the orchestrator in `npm start`) while it runs.
 */
const dataSource = parseRunbookOrThrow(testRunbookYaml({ name: "csv-parse" })).dataSource;
const rowLimit = { max: 1_000_000, route: "POST /api/batches" };

function bigCsv(rows: number): string {
  const lines = Array.from(
    { length: rows },
    (_, i) => `user.number${i}@contoso.test,smtp:user.number${i}@contoso.test;smtp:u${i}@fabrikam.test`,
  );
  return `UserPrincipalName,ProxyAddresses\n${lines.join("\n")}\n`;
}

/** How many event loop turns (setImmediate callbacks) ran while `work` was pending. */
async function turnsDuring<T>(work: () => Promise<T> | T): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  // Nothing before the work has let the loop turn: any turn counted happened during it.
  const result = await work();
  running = false;
  return { turns, result };
}

describe("parseMembersCsv", () => {
  it("lets the event loop turn while it parses a large CSV", async () => {
    const csv = bigCsv(20_000);
    const { turns, result } = await turnsDuring(() =>
      parseMembersCsv(CsvUpload.ofText(csv), dataSource, { rowLimit }),
    );
    expect(result).toHaveLength(20_000);
    expect(result[19_999]).toMatchObject({ memberKey: "user.number19999@contoso.test", line: 20_001 });
    // A parse that held the loop from start to end would have let no turn run at all.
    expect(turns).toBeGreaterThan(1);
  });

  it("finds a NUL byte far into the file at its line and column", async () => {
    const csv = bigCsv(20_000).replace("user.number15000@", "user.num\0ber15000@");
    await expect(parseMembersCsv(CsvUpload.ofText(csv), dataSource, { rowLimit })).rejects.toMatchObject({
      status: 400,
      extensions: {
        problems: [
          { line: 15_002, message: "column 9 contains a NUL character (U+0000), which cannot be stored" },
        ],
      },
    });
  });

  it("lists the first 100 problems of a wrong file and counts the rest", async () => {
    const csv = `UserPrincipalName,ProxyAddresses\n${",a\n".repeat(250)}`;
    const error = await parseMembersCsv(CsvUpload.ofText(csv), dataSource, { rowLimit }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 400, code: "member_data.invalid" });
    const { extensions, message } = error as { extensions: { problems: unknown[] }; message: string };
    expect(extensions.problems).toHaveLength(100);
    expect(message).toMatch(/; and 150 more problems \(the first 100 are listed\)$/);
  });
});
