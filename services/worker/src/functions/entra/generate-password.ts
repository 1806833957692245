import { randomInt } from "node:crypto";

const lower = "abcdefghijkmnopqrstuvwxyz";
const upper = "ABCDEFGHJKLMNPQRSTUVWXYZ";
const digits = "23456789";
const symbols = "!#$%&*+-=?@^_";

/**
 * A strong random password for an account nobody signs in to with it (the user resets it, or
 * signs in another way). 20 characters with every class present, so it meets Entra's complexity
 * rule whatever the tenant's policy; from the CSPRNG. Never returned, never logged.
 */
export function generatePassword(length = 20): string {
  const all = lower + upper + digits + symbols;
  const chars = [lower, upper, digits, symbols].map(pick);
  while (chars.length < length) chars.push(pick(all));
  // Fisher–Yates, so the guaranteed classes are not always at the front.
  for (let index = chars.length - 1; index > 0; index--) {
    const other = randomInt(index + 1);
    [chars[index], chars[other]] = [chars[other]!, chars[index]!];
  }
  return chars.join("");
}

function pick(alphabet: string): string {
  return alphabet[randomInt(alphabet.length)]!;
}
