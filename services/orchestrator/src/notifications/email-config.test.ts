import { describe, expect, it } from "vitest";
import { emailNotifyConfigFromEnv } from "./email-config.ts";

describe("email notification configuration", () => {
  it("is off by default, and off when set to off", () => {
    expect(emailNotifyConfigFromEnv({})).toEqual({ enabled: false });
    expect(emailNotifyConfigFromEnv({ MATOOLKIT_NOTIFY_EMAIL: "off" })).toEqual({ enabled: false });
  });

  it("on: the sender and the trimmed extra recipients", () => {
    expect(
      emailNotifyConfigFromEnv({
        MATOOLKIT_NOTIFY_EMAIL: "on",
        MATOOLKIT_NOTIFY_EMAIL_FROM: "ops@contoso.com",
        MATOOLKIT_NOTIFY_EMAIL_TO: " a@contoso.com, ,b@fabrikam.example ",
      }),
    ).toEqual({ enabled: true, from: "ops@contoso.com", to: ["a@contoso.com", "b@fabrikam.example"] });
    expect(
      emailNotifyConfigFromEnv({
        MATOOLKIT_NOTIFY_EMAIL: "on",
        MATOOLKIT_NOTIFY_EMAIL_FROM: "ops@contoso.com",
      }),
    ).toEqual({ enabled: true, from: "ops@contoso.com", to: [] });
  });

  it("names the variable of each mistake, never echoing an address", () => {
    expect(() => emailNotifyConfigFromEnv({ MATOOLKIT_NOTIFY_EMAIL: "yes" })).toThrow(
      /MATOOLKIT_NOTIFY_EMAIL:/,
    );
    expect(() => emailNotifyConfigFromEnv({ MATOOLKIT_NOTIFY_EMAIL: "on" })).toThrow(
      /MATOOLKIT_NOTIFY_EMAIL_FROM: required when MATOOLKIT_NOTIFY_EMAIL=on/,
    );
    expect(() =>
      emailNotifyConfigFromEnv({ MATOOLKIT_NOTIFY_EMAIL: "on", MATOOLKIT_NOTIFY_EMAIL_FROM: "ops" }),
    ).toThrow(/MATOOLKIT_NOTIFY_EMAIL_FROM: not an email address/);
    let message = "";
    try {
      emailNotifyConfigFromEnv({
        MATOOLKIT_NOTIFY_EMAIL: "on",
        MATOOLKIT_NOTIFY_EMAIL_FROM: "ops@contoso.com",
        MATOOLKIT_NOTIFY_EMAIL_TO: "a@contoso.com,secret-person",
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/MATOOLKIT_NOTIFY_EMAIL_TO: not an email address/);
    expect(message).not.toContain("secret-person");
  });
});
