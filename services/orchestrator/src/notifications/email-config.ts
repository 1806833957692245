import { parseOrExplain } from "@matoolkit/platform";
import { z } from "zod";

/**
 * Optional email notifications (issue 31 item 7), off by default:
 * MATOOLKIT_NOTIFY_EMAIL=on, MATOOLKIT_NOTIFY_EMAIL_FROM (a mailbox UPN in the target tenant, the
 * sender of Graph sendMail) and MATOOLKIT_NOTIFY_EMAIL_TO (comma-separated extra recipients).
 * Errors name the variable and never echo an address.
 */
const address = z.string().regex(/^[^@\s,;<>]+@[^@\s,;<>]+\.[^@\s,;<>]+$/u, "not an email address");

export const emailNotifyConfigSchema = z
  .object({
    enabled: z.enum(["on", "off"]).default("off"),
    from: address.optional(),
    to: z
      .string()
      .optional()
      .transform((list) =>
        (list ?? "")
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item !== ""),
      )
      .pipe(z.array(address)),
  })
  .superRefine((config, context) => {
    if (config.enabled === "on" && config.from === undefined)
      context.addIssue({
        code: "custom",
        path: ["from"],
        message: "required when MATOOLKIT_NOTIFY_EMAIL=on (a mailbox UPN in the target tenant)",
      });
  })
  .transform((config) =>
    config.enabled === "on" && config.from !== undefined
      ? { enabled: true as const, from: config.from, to: config.to }
      : { enabled: false as const },
  );
export type EmailNotifyConfig = z.infer<typeof emailNotifyConfigSchema>;

export const emailNotifyEnv = {
  enabled: "MATOOLKIT_NOTIFY_EMAIL",
  from: "MATOOLKIT_NOTIFY_EMAIL_FROM",
  to: "MATOOLKIT_NOTIFY_EMAIL_TO",
} as const;

export function emailNotifyConfigFromEnv(env: Record<string, string | undefined>): EmailNotifyConfig {
  const raw = Object.fromEntries(
    Object.entries(emailNotifyEnv).map(([key, name]) => [key, env[name]?.trim() || undefined]),
  );
  return parseOrExplain(emailNotifyConfigSchema, raw, emailNotifyEnv);
}
