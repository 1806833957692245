import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiHarness, testRunbookYaml, type ApiHarness } from "../../test/api-test-harness.ts";
import { defaultRequestLimits } from "../http/request-limits.ts";
import { mutate, mutateParameter, seededRandom, type Random } from "../../test/fuzz/mutations.ts";

/**
 * Thousands of mutated runbooks, CSVs, JSON bodies and path and query parameters against the real
 * admin API (real PostgreSQL): none may answer 5xx, and the server must keep serving. FUZZ_CASES and FUZZ_SEED
 * make longer or replayed runs; a failure prints the seed and the case to replay it.
 */
const cases = Number(process.env.FUZZ_CASES ?? 2_000);
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const parallel = 8;

let harness: ApiHarness;
let batchId: number;
const runbook = "fuzz-target";
const validCsv = Buffer.from(
  "UserPrincipalName,ProxyAddresses,DisplayName\n" +
    "alex@contoso.test,smtp:alex@contoso.test;smtp:a@contoso.test,Alex\n" +
    '"b@contoso.test","smtp:b@contoso.test","B, with comma"\n',
);
const validYaml = Buffer.from(testRunbookYaml({ name: "fuzzed", initWorkerId: "worker-01" }));

beforeAll(async () => {
  // `parallel` requests at once, uploads among them: a 429 would hide the body it was sent with.
  harness = await startApiHarness({
    requestLimits: { ...defaultRequestLimits, heavyPerCaller: parallel, heavyTotal: parallel },
  });
  const published = await harness.request("POST", "/runbooks", {
    body: testRunbookYaml({ name: runbook }),
    type: "application/yaml",
  });
  expect(published.status).toBe(201);
  const created = await send("POST", `/batches?runbook=${runbook}`, "text/csv", validCsv);
  expect(created.status).toBe(201);
  batchId = (JSON.parse(created.text) as { id: number }).id;
});

afterAll(async () => {
  await harness?.stop();
});

async function send(method: string, apiPath: string, type: string, body?: Uint8Array | string) {
  const url = apiPath.startsWith("/problems/") ? `${harness.url}${apiPath}` : `${harness.url}/api${apiPath}`;
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${harness.adminToken}`, "content-type": type },
    body,
  });
  return { status: response.status, text: await response.text() };
}

interface FuzzCase {
  readonly kind: string;
  readonly send: () => ReturnType<typeof send>;
}

/** A JSON string with a raw escape spliced in: how lone surrogates and NUL reach a JSON body. */
function withEscape(random: Random, value: string): string {
  const json = JSON.stringify(value);
  const at = 1 + Math.floor(random() * (json.length - 1));
  const escape = ["\\u0000", "\\ud800", "\\udfff", "\\u001b"][Math.floor(random() * 4)] as string;
  return json.slice(0, at).replace(/\\$/u, "") + escape + json.slice(at);
}

/**
 * Every operation with a path or query parameter. `{…}` holds a valid value; one of them is
 * mutated per case. Destructive operations point at a batch or runbook that does not exist, so a
 * mutation that happens to leave the value intact cannot cancel the batch the other cases use.
 * Valid values must never answer 5xx either.
 */
function parameterTargets(): ReadonlyArray<readonly [method: string, template: string, body?: string]> {
  const members = validCsv.toString("utf8");
  return [
    ["GET", "/batches?runbook={fuzz-target}&status={active}&limit={20}&offset={0}"],
    ["POST", `/batches?runbook={${runbook}}`, members],
    ["GET", `/batches/{${batchId}}`],
    ["GET", `/batches/{${batchId}}/members`],
    ["GET", `/batches/{${batchId}}/phases`],
    ["GET", `/batches/{${batchId}}/steps?limit={50}&offset={0}`],
    ["GET", `/batches/{${batchId}}/events?afterId={0}&limit={10}`],
    ["POST", `/batches/{${batchId}}/advance`],
    ["POST", "/batches/{999999}/cancel"],
    ["DELETE", "/batches/{999999}/members/{1}"],
    ["GET", `/runbooks/{${runbook}}`],
    ["GET", `/runbooks/{${runbook}}/versions`],
    ["GET", `/runbooks/{${runbook}}/versions/{1}`],
    ["DELETE", "/runbooks/{absent-runbook}/versions/{1}"],
    ["GET", `/runbooks/{${runbook}}/template?version={1}`],
    ["GET", `/runbooks/{${runbook}}/automation`],
    ["PUT", "/runbooks/{absent-runbook}/automation", '{"enabled":false}'],
    // Not the target runbook: reading its (absent) csv source answers 502 datasource.failed.
    ["POST", "/runbooks/{absent-runbook}/query/preview?limit={5}"],
    ["POST", "/runbooks?name={fuzzed}&overdueBehavior={rerun}&rerunInit={true}", validYaml.toString("utf8")],
    ["GET", "/problems/{state.conflict}"],
    // Issue 12's operations.
    ["GET", `/batches/{${batchId}}/report.csv`],
    ["GET", "/audit?afterId={0}&limit={10}&actor={local-admin}&batchId={1}"],
    ["POST", "/batches/{999999}/pause"],
    ["POST", "/batches/{999999}/resume"],
    ["POST", "/batches/{999999}/redrive", '{"memberIds":[1,2]}'],
    ["POST", `/runbooks/{${runbook}}/plan?limit={5}`, members],
    ["GET", "/webhooks/{999999}/deliveries?afterId={0}&limit={10}"],
    // Issue 31's retention: no batch here has ended, and no member has this key.
    ["POST", "/purge?dryRun={true}"],
    ["DELETE", "/members/{absent-member@contoso.test}?force={false}"],
  ];
}

function parameterCase(random: Random): FuzzCase {
  const targets = parameterTargets();
  const [method, template, body] = targets[Math.floor(random() * targets.length)] as (typeof targets)[number];
  const slots = template.match(/\{[^}]*\}/gu)?.length ?? 0;
  const mutated = Math.floor(random() * slots);
  let slot = 0;
  const apiPath = template.replace(/\{([^}]*)\}/gu, (_all, value: string) =>
    slot++ === mutated ? mutateParameter(random, value) : value,
  );
  const type =
    body === undefined || body.startsWith("{")
      ? "application/json"
      : body.startsWith("UserPrincipalName")
        ? "text/csv"
        : "application/yaml";
  return {
    kind: `parameter ${method} ${apiPath.slice(0, 120)}`,
    send: () => send(method, apiPath, type, body),
  };
}

function fuzzCase(random: Random): FuzzCase {
  if (random() < 0.25) return parameterCase(random);
  const roll = random();
  if (roll < 0.35) {
    const body = mutate(random, validYaml);
    return { kind: "runbook yaml", send: () => send("POST", "/runbooks", "application/yaml", body) };
  }
  if (roll < 0.5) {
    const yaml = withEscape(random, mutate(random, validYaml).toString("utf8"));
    return {
      kind: "runbook json",
      send: () => send("POST", "/runbooks", "application/json", `{"yaml":${yaml}}`),
    };
  }
  if (roll < 0.8) {
    const body = mutate(random, validCsv);
    return { kind: "batch csv", send: () => send("POST", `/batches?runbook=${runbook}`, "text/csv", body) };
  }
  if (roll < 0.9) {
    const body = mutate(random, validCsv);
    return { kind: "members csv", send: () => send("POST", `/batches/${batchId}/members`, "text/csv", body) };
  }
  const key =
    random() < 0.5 ? "UserPrincipalName" : mutate(random, Buffer.from("UserPrincipalName")).toString();
  const value = withEscape(random, `m${Math.floor(random() * 1e6)}@contoso.test`);
  const body = `{"members":[{${JSON.stringify(key)}:${value},"ProxyAddresses":"smtp:x@contoso.test"}]}`;
  return {
    kind: "members json",
    send: () => send("POST", `/batches/${batchId}/members`, "application/json", body),
  };
}

describe(`admin API fuzz (FUZZ_SEED=${seed} FUZZ_CASES=${cases})`, () => {
  it(
    "answers every mutated body and parameter without a 5xx and keeps serving",
    { timeout: 120_000 },
    async () => {
      const random = seededRandom(seed);
      const all = Array.from({ length: cases }, () => fuzzCase(random));
      const serverErrors: string[] = [];
      const statuses = new Map<number, number>();
      for (let start = 0; start < all.length; start += parallel) {
        await Promise.all(
          all.slice(start, start + parallel).map(async (fuzz, offset) => {
            const { status, text } = await fuzz.send();
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (status >= 500) {
              serverErrors.push(`case ${start + offset} (${fuzz.kind}): ${status} ${text.slice(0, 200)}`);
            }
          }),
        );
      }
      expect(serverErrors, `replay with FUZZ_SEED=${seed} FUZZ_CASES=${cases}`).toEqual([]);
      // Both outcomes were exercised: some mutations stay valid, most are refused.
      expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
      expect(statuses.get(400) ?? 0).toBeGreaterThan(cases / 4);

      const valid = await harness.request("POST", "/runbooks", {
        body: testRunbookYaml({ name: "after-the-fuzz" }),
        type: "application/yaml",
      });
      expect(valid.status).toBe(201);
      expect((await harness.request("GET", "/runbooks/after-the-fuzz")).status).toBe(200);
    },
  );
});
