import { createHash, createHmac } from "node:crypto";

/** Dummy keys for the emulators (they check a request's signature format, not the secret). */
export const EMULATOR_CREDENTIALS = {
  accessKeyId: "matoolkit-test-key",
  secretAccessKey: "matoolkit-test-secret",
} as const;

/**
 * One AWS API call signed with Signature Version 4 as the AWS SDKs sign it
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html). The emulators
 * check only the Authorization header's form, so the signature itself is not verified here.
 * `json`: the AWS JSON 1.0 protocol (DynamoDB: `X-Amz-Target: DynamoDB_20120810.<Action>`).
 * `query`: the Query protocol (SNS; SQS before JSON): a form body with `Action=<Action>`.
 * The harness's own setup calls only; a few calls do not justify an SDK dependency.
 */
export async function awsRequest(options: {
  readonly endpoint: string;
  readonly region: string;
  readonly service: "dynamodb" | "sns" | "sqs";
  readonly protocol: { readonly json: string } | { readonly query: string };
  readonly params: Readonly<Record<string, unknown>>;
}): Promise<{ readonly status: number; readonly body: string }> {
  const url = new URL(options.endpoint);
  const body =
    "json" in options.protocol
      ? JSON.stringify(options.params)
      : new URLSearchParams({
          Action: options.protocol.query,
          ...Object.fromEntries(Object.entries(options.params).map(([key, value]) => [key, String(value)])),
        }).toString();
  const amzDate = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const headers: Record<string, string> = {
    "content-type":
      "json" in options.protocol
        ? "application/x-amz-json-1.0"
        : "application/x-www-form-urlencoded; charset=utf-8",
    host: url.host,
    "x-amz-date": amzDate,
    ...("json" in options.protocol ? { "x-amz-target": options.protocol.json } : {}),
  };
  const names = Object.keys(headers).sort();
  const canonicalRequest = [
    "POST",
    url.pathname === "" ? "/" : url.pathname,
    "",
    ...names.map((name) => `${name}:${headers[name]!.trim()}`),
    "",
    names.join(";"),
    sha256(body),
  ].join("\n");
  const scope = `${amzDate.slice(0, 8)}/${options.region}/${options.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
  let key: Buffer = hmac(`AWS4${EMULATOR_CREDENTIALS.secretAccessKey}`, amzDate.slice(0, 8));
  for (const part of [options.region, options.service, "aws4_request"]) key = hmac(key, part);
  const signature = createHmac("sha256", key).update(stringToSign).digest("hex");
  const response = await fetch(url, {
    method: "POST",
    headers: {
      ...headers,
      authorization: `AWS4-HMAC-SHA256 Credential=${EMULATOR_CREDENTIALS.accessKeyId}/${scope}, SignedHeaders=${names.join(";")}, Signature=${signature}`,
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}
