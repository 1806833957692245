import { randomFillSync } from "node:crypto";

let lastMs = 0;
let sequence = 0;

/**
 * Random bytes drawn a thousand ids at a time: `randomBytes(3)` per id was a system call and a
 * buffer per published message (1 % of the embedded process's CPU in bench:orchestrator's profile).
 */
const RANDOM_BYTES_PER_ID = 3;
const randomPool = Buffer.alloc(RANDOM_BYTES_PER_ID * 1024);
let randomOffset = randomPool.length;

function randomHex(): string {
  if (randomOffset + RANDOM_BYTES_PER_ID > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const hex = randomPool.toString("hex", randomOffset, randomOffset + RANDOM_BYTES_PER_ID);
  randomOffset += RANDOM_BYTES_PER_ID;
  return hex;
}

/**
 * A UUIDv7-shaped id that sorts in creation order within this process (time in ms, then a
 * sequence number). pg-boss hands out the jobs of a queue by created_on, then id; all the jobs
 * of one publish transaction share created_on, so these ids keep a batch in publish order, as
 * publishing the messages one transaction at a time did. Across processes order was never
 * promised (nor by Service Bus without sessions).
 */
export function orderedJobId(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else {
    sequence += 1;
  }
  const time = lastMs.toString(16).padStart(12, "0");
  const seq = sequence.toString(16).padStart(12, "0").slice(-12);
  const random = randomHex();
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${seq.slice(0, 3)}-8${seq.slice(3, 6)}-${seq.slice(6, 12)}${random}`;
}
