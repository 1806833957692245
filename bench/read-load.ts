/**
 * Load generator of the read-models benchmark (bench/read-models.bench.ts spawns it), in a process
 * of its own so that building requests and reading answers does not compete with the API's event
 * loop. Input (stdin): a JSON LoadPlan. For each endpoint in turn: `readers` concurrent loops, each on
 * its own keep-alive connection, sending the GET again as soon as the previous answer has been
 * read in full, for `seconds` (after a short unrecorded warm-up). Prints one JSON line to stdout:
 * per endpoint the latency percentiles (ms, request sent → last body byte), req/s, answer size
 * and how many answers were not 200.
 */
import http from "node:http";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import {
  endpointFiguresSchema,
  loadPlanSchema,
  type EndpointFigures,
  type LoadPlan,
} from "./read-load.plan.ts";
import { percentile } from "./sql-counter.ts";

interface Answer {
  readonly status: number;
  readonly bytes: number;
}

function get(agent: http.Agent, origin: URL, path: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        agent,
        host: origin.hostname,
        port: origin.port,
        path,
        headers: { authorization: `Bearer ${token}` },
      },
      (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, bytes }));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
  });
}

async function hammer(plan: LoadPlan, path: string, seconds: number) {
  const origin = new URL(plan.origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.readers });
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  const reader = async () => {
    while (performance.now() < end) {
      const sent = performance.now();
      const answer = await get(agent, origin, path, plan.token);
      latencies.push(performance.now() - sent);
      if (answer.status !== 200) errors += 1;
      bytes = answer.bytes;
    }
  };
  await Promise.all(Array.from({ length: plan.readers }, reader));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  return { latencies, errors, bytes, elapsed };
}

const round = (ms: number) => Math.round(ms * 10) / 10;

async function run(plan: LoadPlan): Promise<EndpointFigures[]> {
  const figures: EndpointFigures[] = [];
  for (const endpoint of plan.endpoints) {
    if (plan.warmupSeconds > 0) await hammer(plan, endpoint.path, plan.warmupSeconds);
    const { latencies, errors, bytes, elapsed } = await hammer(plan, endpoint.path, plan.seconds);
    figures.push({
      name: endpoint.name,
      path: endpoint.path,
      requests: latencies.length,
      reqPerSec: round(latencies.length / elapsed),
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.reduce((most, ms) => Math.max(most, ms), 0)),
      bytes,
      errors,
    });
  }
  return figures;
}

// On stdin rather than argv: the plan holds a bearer token, which `ps` would show.
let input = "";
for await (const chunk of process.stdin) input += String(chunk);
const plan = loadPlanSchema.parse(JSON.parse(input));
process.stdout.write(`${JSON.stringify(z.array(endpointFiguresSchema).parse(await run(plan)))}\n`);
