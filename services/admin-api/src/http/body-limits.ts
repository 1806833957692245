import { parse as parseContentType } from "content-type";
import express, { type RequestHandler } from "express";
import iconv from "iconv-lite";
import { CsvUpload } from "../csv/csv-upload.ts";
import { readUploadChunks } from "./upload-body.ts";
import type { BodySpec } from "../openapi/operation.ts";
import { bodyTooLarge } from "./limit-errors.ts";
import { MEMBER_UPLOAD_LIMIT, routeLimits, routeName, type RequestLimits } from "./request-limits.ts";

interface LimitedOperation {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly body?: BodySpec | undefined;
}

/**
 * The body parsers of an operation, with its byte limit: a member upload's from the request limits
 * (configurable), any other body's as the operation declares it. A Content-Length over the limit
 * is refused before a byte is read; a chunked body when the limit is reached. Either way the 413
 * names the size, the limit and the route (body-parser's own "request entity too large" did not).
 */
export function limitedBodyParsers(operation: LimitedOperation, limits: RequestLimits): RequestHandler[] {
  const body = operation.body;
  if (body === undefined) return [];
  const memberUpload = body.limit === MEMBER_UPLOAD_LIMIT;
  if (memberUpload !== (routeLimits[operation.operationId]?.memberUpload === true)) {
    throw new Error(
      `${operation.operationId}: a member upload route (request-limits.ts) declares limit MEMBER_UPLOAD_LIMIT, no other does`,
    );
  }
  const limit = memberUpload ? limits.memberUploadBytes : parseByteLimit(body.limit);
  const route = routeName(operation);
  const types = Object.keys(body.content);
  const json = types.filter(isJsonMediaType);
  const text = types.filter((type) => !isJsonMediaType(type));
  if (memberUpload !== (body.upload === true)) {
    throw new Error(`${operation.operationId}: a member upload route declares upload: true, no other does`);
  }
  const parsers = [
    ...(json.length > 0 ? [express.json({ type: json, limit })] : []),
    ...(text.length > 0
      ? memberUpload
        ? uploadParsers(text, limit)
        : [express.text({ type: text, limit })]
      : []),
  ];
  const refuseDeclaredSize: RequestHandler = (req, _res, next) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      return next(bodyTooLarge(declared, limit, route, memberUpload));
    }
    next();
  };
  return [
    refuseDeclaredSize,
    ...parsers.map((parser) => explainTooLarge(parser, limit, route, memberUpload)),
  ];
}

/**
 * A member upload's text body (a CSV) is kept as bytes, a CsvUpload (csv/csv-upload.ts), never
 * one string or one buffer: upload-body.ts reads it as body-parser's text parser did (the same
 * limit, Content-Encoding and aborted-request answers) but keeps the chunks; the charset is
 * checked first as the text parser checks it (415 `unsupported charset "X"`, UTF-8 by default),
 * and the handler's readers decode the bytes in slices with the same decoder (iconv-lite).
 */
function uploadParsers(types: string[], limit: number): RequestHandler[] {
  const charsetOf = (header: string | undefined) =>
    (header === undefined ? undefined : parseContentType(header).parameters.charset?.toLowerCase()) ??
    "utf-8";
  const refuseUnsupportedCharset: RequestHandler = (req, _res, next) => {
    if (req.is(types) === false || req.is(types) === null) return next();
    const charset: string = charsetOf(req.headers["content-type"]);
    if (iconv.encodingExists(charset)) return next();
    const error = Object.assign(new Error(`unsupported charset "${String(charset).toUpperCase()}"`), {
      status: 415,
      type: "charset.unsupported",
    });
    // As body-parser does: the body is read off (and dropped) so the client gets the answer.
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      next(error);
    };
    req.once("end", answer).once("close", answer).resume();
  };
  const read = readUploadChunks(types, limit, (req, chunks) => {
    req.body = new CsvUpload(chunks, charsetOf(req.headers["content-type"]));
  });
  return [refuseUnsupportedCharset, read];
}

/** JSON media types are parsed as JSON, everything else as text. */
export function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || mediaType.endsWith("+json");
}

/** body-parser's 413 (`entity.too.large`) becomes ours, naming the limit. */
function explainTooLarge(
  parser: RequestHandler,
  limit: number,
  route: string,
  configurable: boolean,
): RequestHandler {
  return (req, res, next) =>
    parser(req, res, (error?: unknown) => {
      const { type } = (error ?? {}) as { type?: unknown };
      if (type === "entity.too.large") {
        // A chunked body is cut at the limit: how much more would have come is unknown.
        return next(bodyTooLarge(undefined, limit, route, configurable));
      }
      next(error);
    });
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** "16kb", "1mb": the declarations' notation (body-parser's); anything else is a programming error. */
export function parseByteLimit(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)$/i.exec(text.trim());
  if (match === null) throw new Error(`body limit '${text}' is not a size such as 16kb or 1mb`);
  return Math.floor(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
}
