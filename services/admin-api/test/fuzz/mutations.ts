/**
 * Seeded mutations for the admin API fuzz test: the same seed gives the same cases, so a failure
 * printed with its seed and case number can be replayed (FUZZ_SEED=… FUZZ_CASES=…).
 */
export type Random = () => number;

/** mulberry32: tiny, fast, good enough to spread mutations; not for anything secret. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (random: Random, below: number): number => Math.floor(random() * below);
const pick = <T>(random: Random, items: readonly T[]): T => items[int(random, items.length)] as T;

const controlChars = ["\0", "\x01", "\x07", "\b", "\x1b", "\x7f", "\r", "\u2028", "\uFEFF", "\uFFFD"];
const yamlConfusions = [
  "[]",
  "{}",
  "null",
  "~",
  "123",
  "-1e309",
  "true",
  "0x1F",
  "!!binary aGVsbG8=",
  "&a [*a]",
  "*undefined_alias",
  "'",
  '"\\u0000"',
  '"\\ud800"',
  "!!js/function 'x'",
  "|-\n  multi\n  line",
  "2030-01-01",
  ": :",
];

type Mutation = (random: Random, input: Buffer) => Buffer;

const mutations: readonly Mutation[] = [
  // byte flips
  (random, input) => {
    const out = Buffer.from(input);
    for (let n = 1 + int(random, 4); n > 0 && out.length > 0; n--)
      out[int(random, out.length)] = int(random, 256);
    return out;
  },
  // truncation
  (random, input) => input.subarray(0, int(random, input.length + 1)),
  // duplication of a slice
  (random, input) => {
    const start = int(random, input.length + 1);
    const end = start + int(random, input.length - start + 1);
    return Buffer.concat([input.subarray(0, end), input.subarray(start, end), input.subarray(end)]);
  },
  // NUL and control characters
  (random, input) => insertAt(random, input, pick(random, controlChars).repeat(1 + int(random, 3))),
  // a huge field
  (random, input) => insertAt(random, input, "x".repeat(10_000 + int(random, 200_000))),
  // YAML type confusion: a value replaced by another type
  (random, input) => {
    const text = input.toString("utf8");
    const colons = [...text.matchAll(/: [^\n]*/gu)];
    if (colons.length === 0) return input;
    const match = pick(random, colons);
    const at = (match.index ?? 0) + 2;
    return Buffer.from(
      text.slice(0, at) + pick(random, yamlConfusions) + text.slice(at + match[0].length - 2),
    );
  },
  // deep nesting
  (random, input) => {
    const depth = 50 + int(random, 3_000);
    const nested =
      random() < 0.5 ? "[".repeat(depth) + "]".repeat(depth) : "{a: ".repeat(depth) + "1" + "}".repeat(depth);
    return insertAt(random, input, random() < 0.5 ? `\nx: ${nested}\n` : nested);
  },
  // a repeated line (repeated CSV header column, repeated YAML key)
  (random, input) => {
    const lines = input.toString("utf8").split("\n");
    const line = int(random, lines.length);
    lines.splice(line, 0, lines[line] ?? "");
    return Buffer.from(lines.join("\n"));
  },
  // a repeated CSV header column
  (random, input) => {
    const [header = "", ...rest] = input.toString("utf8").split("\n");
    const columns = header.split(",");
    return Buffer.from([`${header},${pick(random, columns)}`, ...rest].join("\n"));
  },
];

function insertAt(random: Random, input: Buffer, text: string): Buffer {
  const at = int(random, input.length + 1);
  return Buffer.concat([input.subarray(0, at), Buffer.from(text, "utf8"), input.subarray(at)]);
}

/** One to three mutations of `seed`. */
export function mutate(random: Random, seed: Buffer): Buffer {
  let out = seed;
  for (let n = 1 + int(random, 3); n > 0; n--) out = pick(random, mutations)(random, out);
  return out;
}

/**
 * Raw escapes spliced into an encoded URL part: NUL, UTF-8 that is invalid (a lone surrogate, an
 * overlong NUL, a stray byte), separators and broken escapes, as a hand-written URL carries them.
 */
const rawEscapes = [
  "%00",
  "%ED%A0%80",
  "%ED%BF%BF",
  "%C0%80",
  "%FF",
  "%E2%80%A8",
  "%EF%BB%BF",
  "%0A",
  "%2F",
  "%3F",
  "%23",
  "%26",
  "%3D",
  "%25",
  "%",
  "%G0",
  "%u0000",
  "..",
];

const parameterMutations: readonly Mutation[] = [
  mutations[0] as Mutation, // byte flips
  mutations[1] as Mutation, // truncation
  mutations[2] as Mutation, // duplication of a slice
  mutations[3] as Mutation, // NUL and control characters
  // a long value (not a huge one: a URL has to fit in the request line)
  (random, input) => insertAt(random, input, "x".repeat(100 + int(random, 2_000))),
  // another type
  (random) =>
    Buffer.from(pick(random, ["", "-1", "0", "1.5", "1e3", "0x10", "2147483648", "9".repeat(30), "null"])),
];

/**
 * A mutated path or query parameter, percent-encoded byte by byte (so any byte, valid UTF-8 or
 * not, reaches the server), with raw escapes spliced in between the encoded bytes.
 */
export function mutateParameter(random: Random, value: string): string {
  let bytes: Buffer = Buffer.from(value, "utf8");
  for (let n = 1 + int(random, 2); n > 0; n--) bytes = pick(random, parameterMutations)(random, bytes);
  const parts = [...bytes].map((byte) =>
    /[A-Za-z0-9\-._~]/u.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
  );
  for (let n = int(random, 3); n > 0; n--)
    parts.splice(int(random, parts.length + 1), 0, pick(random, rawEscapes));
  return parts.join("");
}
