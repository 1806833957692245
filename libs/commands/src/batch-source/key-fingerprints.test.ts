import { describe, expect, it } from "vitest";
import { KeyFingerprints } from "./key-fingerprints.ts";

describe("key fingerprints", () => {
  it("names the earlier row of a repeated key, across the table's growth, and no row for new keys", () => {
    const keys = new KeyFingerprints();
    const total = 300_000;
    let candidates = 0;
    for (let row = 1; row <= total; row++) candidates += keys.add(`user${row}@contoso.test`, row).length;
    // 64-bit fingerprints of 300,000 distinct keys: a collision would be a one in 10^8 event.
    expect(candidates).toBe(0);
    expect(keys.add("user7@contoso.test", total + 1)).toEqual([7]);
    expect(keys.add("user299999@contoso.test", total + 2)).toEqual([299_999]);
    // Keys differing only in case or by one character at the end are different keys.
    expect(keys.add("User7@contoso.test", total + 3)).toEqual([]);
    expect(keys.add("user7@contoso.tesT", total + 4)).toEqual([]);
  });

  it("remembers every earlier row of a key seen more than twice", () => {
    const keys = new KeyFingerprints();
    keys.add("a", 1);
    keys.add("b", 2);
    keys.add("a", 3);
    expect(keys.add("a", 4)).toEqual([1, 3]);
  });
});
