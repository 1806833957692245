import { createHash } from "node:crypto";

/**
 * sha256 of the runbook name and the CSV with its line endings normalized (CRLF and CR → LF), a
 * byte order mark and trailing blank lines dropped: the same file saved on another system is the
 * same upload (create-manual-batch.ts's duplicate check). Hashed piece by piece as the upload is
 * decoded (CsvUpload.texts), pausing between pieces (time-slicer.ts), never as one string; the
 * digest is the one of the whole text normalized at once, wherever the pieces split it (batches
 * keep it: an upload must still match one made before).
 */
export async function uploadFingerprint(
  runbookName: string,
  pieces: Iterable<string>,
  pause: () => Promise<void> | undefined,
): Promise<string> {
  const hash = createHash("sha256").update(runbookName).update("\0");
  let first = true;
  // Newlines at the end of what was read so far: hashed only once something else follows.
  let heldNewlines = 0;
  // The last slice ended with CR: a LF starting the next one is the same line break.
  let endedWithCr = false;
  for (const piece of pieces) {
    if (piece === "") continue;
    let text = first ? piece.replace(/^\uFEFF/, "") : piece;
    first = false;
    if (endedWithCr && text.startsWith("\n")) text = text.slice(1);
    endedWithCr = text.endsWith("\r");
    const normalized = text.replace(/\r\n?/g, "\n");
    const content = normalized.replace(/\n+$/, "");
    const trailing = normalized.length - content.length;
    if (content === "") {
      heldNewlines += trailing;
    } else {
      hash.update("\n".repeat(heldNewlines)).update(content);
      heldNewlines = trailing;
    }
    await pause();
  }
  return hash.digest("hex");
}
