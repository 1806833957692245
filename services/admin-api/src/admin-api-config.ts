import { parseOrExplain } from "@matoolkit/platform";
import { z } from "zod";

export const adminApiConfigSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
});
export type AdminApiConfig = z.infer<typeof adminApiConfigSchema>;

export function adminApiConfigFromEnv(env: Record<string, string | undefined>): AdminApiConfig {
  return parseOrExplain(
    adminApiConfigSchema,
    { host: env.MATOOLKIT_API_HOST || undefined, port: env.PORT || undefined },
    { host: "MATOOLKIT_API_HOST", port: "PORT" },
  );
}
