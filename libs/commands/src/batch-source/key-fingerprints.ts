/**
 * Finds a primary key repeated in a later row without holding the keys: each key leaves a 64-bit
 * fingerprint and its row number in a typed array (12 bytes a slot, 24 MB for a million rows,
 * where a Map of the keys themselves takes over 100 MB). A fingerprint seen before names a
 * candidate earlier row; the caller compares the two keys, so a fingerprint collision can never
 * fail a tick, it only costs one lookup.
 */
export class KeyFingerprints {
  private capacity = 1 << 16;
  private used = 0;
  /**
   * Three words a slot, side by side so that a probe touches one cache line: the fingerprint's
   * two halves and the row number (0 = empty slot).
   */
  private slots = new Uint32Array(this.capacity * 3);

  /**
   * Records `key` for `rowNumber` (1-based) and returns the rows recorded earlier with the same
   * fingerprint (almost always none; one for a repeated key).
   */
  add(key: string, rowNumber: number): readonly number[] {
    if ((this.used + 1) * 4 > this.capacity * 3) this.grow();
    fingerprint(key);
    const { low, high } = scratch;
    const slots = this.slots;
    const mask = this.capacity - 1;
    let candidates: number[] | undefined;
    let slot = low & mask;
    while (slots[slot * 3 + 2] !== 0) {
      if (slots[slot * 3] === low && slots[slot * 3 + 1] === high) {
        (candidates ??= []).push(slots[slot * 3 + 2] as number);
      }
      slot = (slot + 1) & mask;
    }
    slots[slot * 3] = low;
    slots[slot * 3 + 1] = high;
    slots[slot * 3 + 2] = rowNumber;
    this.used += 1;
    return candidates ?? none;
  }

  private grow(): void {
    const old = this.slots;
    this.capacity *= 2;
    this.slots = new Uint32Array(this.capacity * 3);
    const mask = this.capacity - 1;
    for (let index = 0; index < old.length; index += 3) {
      if (old[index + 2] === 0) continue;
      let slot = (old[index] as number) & mask;
      while (this.slots[slot * 3 + 2] !== 0) slot = (slot + 1) & mask;
      this.slots.set(old.subarray(index, index + 3), slot * 3);
    }
  }
}

const none: readonly number[] = [];
/** fingerprint's result: written in place, a million keys allocate nothing. */
const scratch = { low: 0, high: 0 };

/** Two independent 32-bit hashes of the UTF-16 code units (FNV-1a and a multiplicative one). */
function fingerprint(key: string): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ key.length;
  for (let index = 0; index < key.length; index++) {
    const unit = key.charCodeAt(index);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
    b ^= b >>> 15;
  }
  // Final mixing, so that keys differing only at the end still spread over the slots.
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  b ^= b >>> 16;
  scratch.low = a >>> 0;
  scratch.high = b >>> 0;
}
