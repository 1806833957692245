import { describe, expect, it } from "vitest";
import { sanitizeErrorMessage } from "./sanitize.ts";

const jwt =
  "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwidXBuIjoiamRvZUBjb250b3NvLmNvbSJ9.c2lnbmF0dXJlLWJ5dGVz_-x";

describe("sanitizeErrorMessage", () => {
  it("replaces member emails and UPNs, keeping the rest of the message", () => {
    expect(sanitizeErrorMessage("User jdoe@contoso.com not found")).toBe("User [email] not found");
    expect(sanitizeErrorMessage("Mailbox 'first.o'brien+tag@sub.contoso.co.uk' is locked")).toBe(
      "Mailbox '[email]' is locked",
    );
    expect(sanitizeErrorMessage("Guest jdoe_contoso.com#EXT#@fabrikam.onmicrosoft.com exists")).toBe(
      "Guest [email] exists",
    );
    expect(sanitizeErrorMessage("Benutzer jürgen.müller@beispiel.de fehlt")).toBe("Benutzer [email] fehlt");
  });

  it("removes bearer tokens, JWTs and Authorization header values", () => {
    const out = [
      sanitizeErrorMessage(`Request failed with Authorization: Bearer ${jwt} attached`),
      sanitizeErrorMessage(`headers {"authorization":"Basic dXNlcjpwYXNz"} rejected`),
      sanitizeErrorMessage(`token was bearer abc.def-ghi_jkl== ok`),
      sanitizeErrorMessage(`id token ${jwt} expired`),
    ];
    expect(out[0]).toBe("Request failed with Authorization: [redacted] attached");
    expect(out[1]).toBe('headers {"authorization":"[redacted]"} rejected');
    expect(out[2]).toBe("token was bearer [redacted] ok");
    expect(out[3]).toBe("id token [redacted] expired");
    for (const text of out) {
      expect(text).not.toMatch(/eyJ|dXNlcjpwYXNz|abc\.def/);
    }
  });

  it("keeps dotted .NET exception type names, which look like but are not tokens", () => {
    expect(sanitizeErrorMessage("Microsoft.Graph.ServiceException: Request_ResourceNotFound")).toBe(
      "Microsoft.Graph.ServiceException: Request_ResourceNotFound",
    );
  });

  it("removes connection-string and client secrets", () => {
    const message =
      "Login failed: Server=tcp:db.example.net;Database=mt;User ID=app;Password=S3cr3t!;Encrypt=True; " +
      "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc+/123=; " +
      "DefaultEndpointsProtocol=https;AccountName=st;AccountKey=Zm9vYmFy==;EndpointSuffix=core.windows.net " +
      "body client_secret=xyz~123&grant_type=client_credentials";
    const out = sanitizeErrorMessage(message, 1000);
    for (const secret of ["S3cr3t!", "abc+/123=", "Zm9vYmFy", "xyz~123"]) expect(out).not.toContain(secret);
    expect(out).toContain("Password=[redacted];Encrypt=True");
    expect(out).toContain("SharedAccessKey=[redacted];");
    expect(out).toContain("AccountKey=[redacted];EndpointSuffix");
    expect(out).toContain("client_secret=[redacted]&grant_type=client_credentials");
  });

  it("removes quoted passwords that contain separators", () => {
    expect(sanitizeErrorMessage(`Password="a;b c";Database=x`)).toBe("Password=[redacted];Database=x");
  });

  it("removes URL userinfo, including passwords that contain @", () => {
    expect(sanitizeErrorMessage("connect postgres://matoolkit:p@ss@db.internal:5432/mt refused")).toBe(
      "connect postgres://[redacted]@db.internal:5432/mt refused",
    );
  });

  it("collapses whitespace so multi-line dumps become one line", () => {
    expect(sanitizeErrorMessage("  Step failed:\r\n\tat line 3\n\n  retry later  ")).toBe(
      "Step failed: at line 3 retry later",
    );
  });

  it("truncates to maxLength with an ellipsis", () => {
    const out = sanitizeErrorMessage("x".repeat(500));
    expect(out).toHaveLength(200);
    expect(out.endsWith("…")).toBe(true);
    expect(sanitizeErrorMessage("abcdefghij", 5)).toBe("abcd…");
    expect(sanitizeErrorMessage("short", 5)).toBe("short");
  });

  it("redacts before truncating, so a secret at the limit is not half-kept", () => {
    const out = sanitizeErrorMessage(`${"a ".repeat(95)}user jdoe@contoso.com`);
    expect(out).not.toContain("jdoe");
    expect(out.length).toBeLessThanOrEqual(200);
  });

  it("stays fast and safe on huge payload dumps", () => {
    const dump = `${"A".repeat(200_000)} ${"user jdoe@contoso.com ".repeat(5000)}`;
    const started = performance.now();
    const out = sanitizeErrorMessage(dump);
    expect(performance.now() - started).toBeLessThan(500);
    expect(out.length).toBeLessThanOrEqual(200);
    expect(out).not.toContain("@");
  });

  it("does not split a surrogate pair when truncating", () => {
    const out = sanitizeErrorMessage(`${"a".repeat(3)}😀😀`, 5);
    expect(out).toBe("aaa…");
  });
});
