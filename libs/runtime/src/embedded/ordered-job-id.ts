import { randomBytes } from "node:crypto";

let lastMs = 0;
let sequence = 0;

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
  const random = randomBytes(3).toString("hex");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${seq.slice(0, 3)}-8${seq.slice(3, 6)}-${seq.slice(6, 12)}${random}`;
}
