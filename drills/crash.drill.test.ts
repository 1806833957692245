import { describe, expect, it } from "vitest";
import { runCrashDrill } from "./crash.drill.ts";

/**
 * A short round of the crash drill (`npm run drill crash` runs the full one): 30 members × 3
 * steps, one kill -9 of the whole system mid-phase, a restart on the same data directory. Every
 * step succeeds and none stays open, within the drill's 60 s target.
 */
describe("crash drill, short round", () => {
  it(
    "completes the batch after kill -9 and a restart: every step succeeded, 0 lost, 0 stuck, within 60 s",
    { timeout: 180_000 },
    async () => {
      const lines: string[] = [];
      const outcome = await runCrashDrill(
        { log: (line) => lines.push(line) },
        {
          members: 30,
          rounds: 1,
          seed: 7,
          stepSeconds: 0.2,
          systemEnv: {},
          keep: false,
          inheritedEnv: process.env,
        },
      );
      expect(outcome.figures, lines.join("\n")).toMatchObject({
        "steps expected": 90,
        "steps succeeded": 90,
        lost: 0,
        stuck: 0,
      });
      expect(Number(outcome.figures["worst seconds from a restart to batch completed"])).toBeLessThanOrEqual(
        60,
      );
      // No job ran twice; a step killed between its side effect and its record may have run again
      // as the worker.lost retry, at most once per job running at the kill (concurrency 16).
      expect(outcome.figures.duplicated, lines.join("\n")).toBe(0);
      expect(
        Number(outcome.figures["re-run after worker.lost (at most the jobs running at a kill)"]),
      ).toBeLessThanOrEqual(16);
    },
  );
});
