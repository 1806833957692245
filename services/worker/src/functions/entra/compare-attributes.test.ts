import { describe, expect, it } from "vitest";
import { matches } from "./compare-attributes.ts";
import { generatePassword } from "./generate-password.ts";
import { graphUserPropertyName } from "./user-properties.ts";

describe("matches (Test-EntraAttributeMatch rules)", () => {
  const addresses = ["SMTP:adele@fabrikam.example", "smtp:adele@contoso.example"];

  it("treats a string as 'contains' and a list as 'contains every item' for multi-valued properties", () => {
    expect(matches("proxyAddresses", addresses, "smtp:ADELE@contoso.example", "contains")).toBe(true);
    expect(
      matches("proxyAddresses", addresses, ["adele@contoso.example", "adele@fabrikam.example"], "contains"),
    ).toBe(true);
    expect(
      matches("proxyAddresses", addresses, ["adele@contoso.example", "x@contoso.example"], "contains"),
    ).toBe(false);
  });

  it("matches a bare address against an smtp: proxy address, but not another prefix", () => {
    expect(matches("proxyAddresses", ["X500:/o=Org/cn=adele"], "/o=org/cn=adele", "contains")).toBe(false);
    expect(matches("otherMails", ["smtp:a@b.example"], "a@b.example", "contains")).toBe(false);
  });

  it("requires set equality in exact mode", () => {
    expect(
      matches("otherMails", ["a@x.example", "b@x.example"], ["B@x.example", "a@x.example"], "exact"),
    ).toBe(true);
    expect(matches("otherMails", ["a@x.example", "b@x.example"], ["a@x.example"], "exact")).toBe(false);
    expect(matches("otherMails", ["a@x.example"], "A@x.example", "exact")).toBe(true);
  });

  it("compares single values case-insensitively, a list meaning 'one of'", () => {
    expect(matches("department", "Sales", " sales ", "contains")).toBe(true);
    expect(matches("accountEnabled", true, "True", "contains")).toBe(true);
    expect(matches("usageLocation", "CA", ["US", "ca"], "contains")).toBe(true);
    expect(matches("usageLocation", "FR", ["US", "CA"], "contains")).toBe(false);
  });

  it("treats null as 'must be empty'", () => {
    expect(matches("companyName", null, null, "contains")).toBe(true);
    expect(matches("otherMails", [], null, "contains")).toBe(true);
    expect(matches("companyName", "Contoso", null, "contains")).toBe(false);
    expect(matches("companyName", null, "Contoso", "contains")).toBe(false);
  });
});

describe("graphUserPropertyName", () => {
  it("maps any casing to Graph's camelCase", () => {
    expect(graphUserPropertyName("ProxyAddresses")).toBe("proxyAddresses");
    expect(graphUserPropertyName("onpremisesimmutableid")).toBe("onPremisesImmutableId");
    expect(graphUserPropertyName("ExtensionAttribute1")).toBe("extensionAttribute1");
  });
});

describe("generatePassword", () => {
  it("has every character class and differs each time", () => {
    const passwords = Array.from({ length: 20 }, () => generatePassword());
    for (const password of passwords) {
      expect(password).toHaveLength(20);
      for (const pattern of [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/]) expect(password).toMatch(pattern);
    }
    expect(new Set(passwords).size).toBe(passwords.length);
  });
});
