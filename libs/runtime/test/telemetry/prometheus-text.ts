/**
 * Test support: the samples of a Prometheus text exposition, as `{ name, labels, value }`.
 * Enough of the format for our own output (no escaped quotes in our label values).
 */
export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parsePrometheusText(text: string): PrometheusSample[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/u.exec(line);
      if (match === null) throw new Error(`not a Prometheus sample: ${line}`);
      const labels: Record<string, string> = {};
      for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/gu)) {
        labels[pair[1]!] = pair[2]!;
      }
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The value of the one sample with this name and (at least) these labels; undefined if none. */
export function sampleValue(
  samples: readonly PrometheusSample[],
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
