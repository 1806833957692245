/**
 * Error messages are persisted and shown to operators (FR-013), so they must never carry tokens,
 * credentials or member PII, and must stay short. Redaction runs before truncation so that a
 * secret cut in half by the length limit can never slip through unrecognised.
 */
const redacted = "[redacted]";

/** Anything longer is cut (at a word boundary) before the regexes run, keeping them cheap. */
const scanLimit = 4000;

const redactions: ReadonlyArray<readonly [RegExp, string]> = [
  // `Authorization: Bearer x`, `"authorization":"Basic x"`: the whole credential, whatever the scheme.
  [
    /\b(authorization)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|negotiate|ntlm|digest|sharedaccesssignature)\s+)?[^\s"',;]+/giu,
    `$1$2${redacted}`,
  ],
  [/\b(bearer)\s+[\w\-.~+/]+=*/giu, `$1 ${redacted}`],
  // JWT: a base64url JSON header (always starts `eyJ`, i.e. `{"`) and two more base64url segments.
  [/\beyJ[\w-]*(?:\.[\w-]*){2,4}/gu, redacted],
  // URL userinfo (`postgres://user:password@host`): before emails, or `password@host` would look like one.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]+@/giu, `$1${redacted}@`],
  // Connection-string, query-string and JSON secrets; quoted values may contain `;`.
  [
    /\b(password|passwd|pwd|sharedaccesskey|sharedaccesssignature|accountkey|client_secret|clientsecret|secret|api[_-]?key|access_token|refresh_token|id_token|token|sig)(["']?\s*[:=]\s*)(?:"[^"]*"|'[^']*'|\{[^}]*\}|[^\s;&,"'}]+)/giu,
    `$1$2${redacted}`,
  ],
  // Emails and UPNs, including guest UPNs such as `jdoe_contoso.com#EXT#@fabrikam.onmicrosoft.com`.
  // The local part may hold an apostrophe (o'brien) but not start with one: it is probably a quote.
  [/[\p{L}\p{N}._%+#-][\p{L}\p{N}._%+'#-]*@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu, "[email]"],
];

export function sanitizeErrorMessage(message: string, maxLength = 200): string {
  let text = message.replace(/\s+/gu, " ").trim();
  let cut = false;
  if (text.length > scanLimit) {
    // Drop the partial word at the cut: half an email or token would no longer be recognised.
    text = text.slice(0, scanLimit).replace(/\S*$/u, "");
    cut = true;
  }
  for (const [pattern, replacement] of redactions) text = text.replace(pattern, replacement);
  text = text.trim();
  return cut || text.length > maxLength ? truncate(text, maxLength) : text;
}

function truncate(text: string, maxLength: number): string {
  const ellipsis = "…";
  if (maxLength <= ellipsis.length) return ellipsis.slice(0, Math.max(0, maxLength));
  let head = text.slice(0, maxLength - ellipsis.length);
  // Never leave half a surrogate pair behind.
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
  return `${head.trimEnd()}${ellipsis}`;
}
