import { isSecretName, MASKED } from "./mask-secrets.ts";
import { setOwn } from "./set-own.ts";

/**
 * Values below this length are masked only where they stand alone (not inside a longer word or
 * number): a 3-character secret masked inside every text would also hide ids and dates.
 */
const MIN_INNER_LENGTH = 4;

/**
 * The known secret VALUES of one member (its secret columns, secret worker outputs) or of a
 * runbook (literal secret params), for masking text that carries them under any name: a worker
 * result echoing the password, an error message quoting it. Strings and numbers are kept (as
 * text); booleans and null are not secrets.
 */
export class SecretValues {
  static readonly none = new SecretValues([]);

  /** Every string and number leaf of `values` (arrays and objects walked). */
  static of(values: Iterable<unknown>): SecretValues {
    const found = new Set<string>();
    for (const value of values) collectLeaves(value, found);
    return found.size === 0 ? SecretValues.none : new SecretValues([...found]);
  }

  readonly #texts: readonly string[];
  readonly #whole: ReadonlySet<string>;
  readonly #inner: readonly string[];
  readonly #standalone: RegExp | undefined;

  private constructor(texts: readonly string[]) {
    this.#texts = texts;
    this.#whole = new Set(texts);
    // Also as JSON would escape it: a result may carry a JSON document as a string.
    const forms = new Set(texts.flatMap((text) => [text, JSON.stringify(text).slice(1, -1)]));
    // Longest first, so a secret containing another is replaced whole.
    const sorted = [...forms].sort((a, b) => b.length - a.length);
    this.#inner = sorted.filter((text) => text.length >= MIN_INNER_LENGTH);
    const short = sorted.filter((text) => text.length < MIN_INNER_LENGTH);
    this.#standalone =
      short.length === 0
        ? undefined
        : new RegExp(`(?<![\\p{L}\\p{N}])(?:${short.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}])`, "gu");
  }

  get size(): number {
    return this.#texts.length;
  }

  union(other: SecretValues): SecretValues {
    if (other.size === 0) return this;
    if (this.size === 0) return other;
    return new SecretValues([...new Set([...this.#texts, ...other.#texts])]);
  }

  /** `text` with every occurrence of a known value replaced by `***`. */
  maskText(text: string): string {
    if (this.#texts.length === 0) return text;
    if (this.#whole.has(text)) return MASKED;
    let masked = text;
    for (const secret of this.#inner) {
      if (masked.includes(secret)) masked = masked.split(secret).join(MASKED);
    }
    return this.#standalone === undefined ? masked : masked.replace(this.#standalone, MASKED);
  }

  /**
   * A JSON value as a read may show it: known values masked in every string (property names
   * included) and number, and the value of every property whose name looks secret
   * ({@link isSecretName}) replaced by `***`, at any depth. Returns a copy; `value` is untouched.
   */
  mask(value: unknown): unknown {
    if (typeof value === "string") return this.maskText(value);
    if (typeof value === "number") return this.#whole.has(String(value)) ? MASKED : value;
    if (Array.isArray(value)) return value.map((item) => this.mask(item));
    if (value === null || typeof value !== "object") return value;
    const masked: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      setOwn(masked, this.maskText(name), isSecretName(name) ? MASKED : this.mask(item));
    }
    return masked;
  }
}

function collectLeaves(value: unknown, into: Set<string>): void {
  if (typeof value === "string") {
    if (value.trim() !== "" && value !== MASKED) into.add(value);
  } else if (typeof value === "number") {
    if (Number.isFinite(value)) into.add(String(value));
  } else if (Array.isArray(value)) {
    for (const item of value) collectLeaves(item, into);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) collectLeaves(item, into);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
