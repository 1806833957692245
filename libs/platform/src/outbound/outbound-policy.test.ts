import { describe, expect, it } from "vitest";
import { nonPublicReason } from "./address-ranges.ts";
import { parseAllowedDestinations } from "./allowed-destinations.ts";
import { OutboundRequestError } from "./outbound-errors.ts";
import { checkDestination, outboundPolicy, type Resolver } from "./outbound-policy.ts";
import { parseOutboundUrl } from "./outbound-url.ts";

const resolveTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

async function refusal(url: string, resolve: Resolver = resolveTo("93.184.215.14"), allowed: string[] = []) {
  const policy = outboundPolicy({ resolve, allowed: parseAllowedDestinations(allowed), allowHint: "set X" });
  try {
    await checkDestination(parseOutboundUrl(url), policy);
    return undefined;
  } catch (error) {
    if (!(error instanceof OutboundRequestError)) throw error;
    return error.message;
  }
}

describe("nonPublicReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.20.30.40", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrier-grade NAT (shared)"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["fd12:3456::1", "unique-local"],
    ["fc00::1", "unique-local"],
    ["224.0.0.251", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "documentation"],
    ["2001:db8::1", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["::ffff:127.0.0.1", "IPv4-mapped IPv6"],
    ["::ffff:8.8.8.8", "IPv4-mapped IPv6"],
    ["::127.0.0.1", "IPv4-compatible IPv6"],
    ["64:ff9b::10.0.0.1", "IPv4/IPv6 translation (NAT64)"],
    ["2002:7f00:1::", "6to4 (embeds an IPv4 address)"],
    ["2001:0:4136:e378::1", "IETF protocol assignment (Teredo, benchmarking)"],
    ["0177.0.0.1", "not an IP address"],
    ["2130706433", "not an IP address"],
  ])("%s is %s", (address, reason) => {
    expect(nonPublicReason(address)).toBe(reason);
  });

  it.each(["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111"])(
    "%s is public",
    (address) => {
      expect(nonPublicReason(address)).toBeUndefined();
    },
  );
});

describe("checkDestination", () => {
  it.each([
    ["http://2130706433/", "address 127.0.0.1 is loopback"],
    ["http://0177.0.0.1/", "address 127.0.0.1 is loopback"],
    ["http://0x7f.1/", "address 127.0.0.1 is loopback"],
    ["http://127.1/", "address 127.0.0.1 is loopback"],
    ["http://[::ffff:127.0.0.1]/", "address ::ffff:7f00:1 is IPv4-mapped IPv6"],
    ["https://169.254.169.254/", "address 169.254.169.254 is link-local (cloud metadata)"],
  ])("normalises %s and refuses it", async (url, message) => {
    expect(await refusal(url)).toBe(`${message}, not allowed; set X`);
  });

  it("resolves names and refuses when ANY address is not public", async () => {
    expect(await refusal("https://mixed.example/", resolveTo("93.184.215.14", "10.0.0.5"))).toBe(
      "address 10.0.0.5 (of mixed.example) is private, not allowed; set X",
    );
    expect(
      await refusal("https://fine.example/", resolveTo("93.184.215.14", "2606:4700::1111")),
    ).toBeUndefined();
  });

  it("names a host that does not resolve", async () => {
    const failing: Resolver = () => Promise.reject(Object.assign(new Error("nope"), { code: "ENOTFOUND" }));
    expect(await refusal("https://nowhere.example/", failing)).toBe(
      "host nowhere.example could not be resolved",
    );
  });

  it("allows what the operator listed: a host name (any address it has) or a CIDR", async () => {
    expect(await refusal("http://hooks.corp/", resolveTo("10.1.2.3"), ["HOOKS.corp."])).toBeUndefined();
    expect(await refusal("http://other.corp/", resolveTo("10.1.2.3"), ["hooks.corp"])).toContain(
      "is private",
    );
    expect(await refusal("http://10.9.9.9/", undefined, ["10.0.0.0/8"])).toBeUndefined();
    expect(await refusal("http://192.168.1.1/", undefined, ["10.0.0.0/8"])).toContain("is private");
    expect(await refusal("http://[::1]:8080/", undefined, ["::1"])).toBeUndefined();
  });

  it("never allows unspecified or multicast addresses, whatever the list says", async () => {
    expect(await refusal("http://0.0.0.0/", undefined, ["0.0.0.0/0"])).toBe(
      "address 0.0.0.0 is unspecified, not allowed",
    );
    expect(await refusal("http://224.0.0.1/", undefined, ["0.0.0.0/0"])).toBe(
      "address 224.0.0.1 is multicast, not allowed",
    );
  });
});

describe("parseOutboundUrl and parseAllowedDestinations", () => {
  it.each([
    ["ftp://example.test/", "must be an absolute http:// or https:// URL"],
    ["not a url", "must not contain whitespace or control characters"],
    ["https://user:pw@example.test/", "must not contain user:password@ credentials"],
    ["https://exa\tmple.test/", "must not contain whitespace or control characters"],
  ])("refuses %j", (url, message) => {
    expect(() => parseOutboundUrl(url)).toThrow(message);
  });

  it.each(["10.0.0.0/33", "::1/129", "a b", "10.0.0.0/8/1", "http://x"])("refuses the entry %j", (entry) => {
    expect(() => parseAllowedDestinations([entry])).toThrow(`'${entry}'`);
  });
});
