/** What every `drills/<name>.drill.ts` exports. */
export interface DrillContext {
  /** Progress lines (indented under the drill's heading). */
  log(line: string): void;
}

export interface DrillOutcome {
  /** Whether every target of the drill was met. */
  readonly passed: boolean;
  /** Printed as `name: value`, e.g. lost, duplicated, stuck, seconds to recover. */
  readonly figures: Readonly<Record<string, string | number>>;
}

export interface DrillModule {
  readonly description: string;
  run(context: DrillContext): Promise<DrillOutcome>;
}
