/**
 * `npm run drill [name…]`: runs the reliability drills (drills/*.drill.ts) one after the other and
 * prints each one's figures. Not part of `npm test` (minutes, kills processes); a short round of
 * the crash drill runs in the suite. Exit 1 when a drill misses its target.
 *
 * Two targets: without names, the embedded drills; `dapr` runs the dapr-* drills, which need the
 * real Dapr binaries (`npm run dapr:install`; MATOOLKIT_DAPR_VERSION=oldest for the 1.16 pin),
 * take up to ~10 minutes each and stop the machine's RabbitMQ for a moment, so they run only when
 * asked for (`dapr`, `all`, or by name).
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DrillModule, DrillOutcome } from "./drill.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const files = (await readdir(here)).filter((file) => file.endsWith(".drill.ts")).sort();
  const available = files.map((file) => file.replace(/\.drill\.ts$/u, ""));
  const isDapr = (name: string) => name.startsWith("dapr-");
  const targets: Record<string, string[]> = {
    dapr: available.filter(isDapr),
    all: available,
  };
  const targetOf = (name: string) => (Object.hasOwn(targets, name) ? targets[name] : undefined);
  const unknown = wanted.filter((name) => !available.includes(name) && targetOf(name) === undefined);
  if (unknown.length > 0) {
    console.error(
      `unknown drill ${unknown.join(", ")}: available are ${available.join(", ")} (or the targets dapr, all)`,
    );
    process.exit(2);
  }
  const names =
    wanted.length > 0
      ? [...new Set(wanted.flatMap((name) => targetOf(name) ?? [name]))]
      : available.filter((name) => !isDapr(name));
  const outcomes: Array<{ name: string; outcome: DrillOutcome }> = [];
  for (const name of names) {
    const drill = (await import(pathToFileURL(path.join(here, `${name}.drill.ts`)).href)) as DrillModule;
    console.log(`\n== drill ${name}: ${drill.description}`);
    const started = Date.now();
    const outcome = await drill.run({ log: (line) => console.log(`   ${line}`) });
    outcomes.push({ name, outcome });
    console.log(
      `-- ${name}: ${outcome.passed ? "PASSED" : "FAILED"} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    for (const [figure, value] of Object.entries(outcome.figures)) console.log(`   ${figure}: ${value}`);
  }
  const failed = outcomes.filter(({ outcome }) => !outcome.passed).map(({ name }) => name);
  console.log(
    `\n${outcomes.length - failed.length}/${outcomes.length} drills met their targets${failed.length ? `; failed: ${failed.join(", ")}` : ""}`,
  );
  process.exit(failed.length === 0 ? 0 : 1);
}

await main();
