import type { Request, RequestHandler } from "express";
import type { Readable, Transform } from "node:stream";
import zlib from "node:zlib";

/**
 * Reads a member upload's body as the chunks received. It is body-parser's raw parser (its
 * read.js with raw-body) without the last step, Buffer.concat: that copied a 45 MB body in one
 * go, 40 to 100 ms of a busy machine per upload in which nothing else ran. The answers are the
 * same: Content-Encoding inflated (415 for one it does not know), 413 past the limit
 * (`entity.too.large`, which body-limits.ts words), 400 for a body that does not match its
 * Content-Length or a request aborted, and after an error the rest of the request is read off
 * so the client gets the answer.
 */
export function readUploadChunks(
  types: readonly string[],
  limit: number,
  keep: (req: Request, chunks: Buffer[]) => void,
): RequestHandler {
  return (req, _res, next) => {
    // No body (req.is answers null) or another type: left to the other parsers, as body-parser does.
    if (typeof req.is([...types]) !== "string") return next();
    const contentEncoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
    let stream: Readable = req;
    let decompression: Transform | undefined;
    let length: number | null = null;
    if (contentEncoding === "identity") {
      const declared = Number(req.headers["content-length"]);
      length = Number.isFinite(declared) ? declared : null;
    } else {
      decompression = decompressionFor(contentEncoding);
      if (decompression === undefined) {
        return next(
          httpError(415, `unsupported content encoding "${contentEncoding}"`, "encoding.unsupported"),
        );
      }
      req.pipe(decompression);
      stream = decompression;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let complete = false;
    const done = (error?: Error) => {
      if (complete) return;
      complete = true;
      stream.off("data", onData).off("end", onEnd).off("error", onEnd);
      req.off("aborted", onAborted);
      if (decompression !== undefined) {
        req.unpipe(decompression);
        decompression.on("error", () => {});
        decompression.destroy();
      }
      if (error !== undefined) return readOff(req, () => next(error));
      if (decompression !== undefined) req.resume();
      keep(req, chunks);
      next();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) done(httpError(413, "request entity too large", "entity.too.large"));
      else chunks.push(chunk);
    };
    const onEnd = (error?: Error) => {
      if (error !== undefined) return done(Object.assign(error, { status: 400, statusCode: 400 }));
      if (length !== null && received !== length) {
        return done(httpError(400, "request size did not match content length", "request.size.invalid"));
      }
      done();
    };
    const onAborted = () => done(httpError(400, "request aborted", "request.aborted"));
    if (length !== null && length > limit) {
      return done(httpError(413, "request entity too large", "entity.too.large"));
    }
    req.on("aborted", onAborted);
    stream.on("data", onData).on("end", onEnd).on("error", onEnd);
  };
}

function decompressionFor(contentEncoding: string): Transform | undefined {
  switch (contentEncoding) {
    case "deflate":
      return zlib.createInflate();
    case "gzip":
      return zlib.createGunzip();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/** The shape of body-parser's errors (http-errors): api-error.ts answers them by status and type. */
function httpError(status: number, message: string, type: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: true, type });
}

function readOff(req: Request, then: () => void): void {
  if (req.complete || req.destroyed) return then();
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    then();
  };
  req.once("end", once).once("close", once).resume();
}
