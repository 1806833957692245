import { z } from "zod";

/**
 * X500 proxy addresses of a source mailbox, as a runbook passes them: a list, or one CSV cell
 * separated by `;` (a legacy DN holds neither `;` nor a line break). Each item is a DN (`/o=…`)
 * with or without its `x500:` prefix; anything else (an SMTP address, say) is refused naming
 * the parameter, not the value.
 */
export const x500Addresses = z
  .union([z.string(), z.array(z.string())])
  .transform((value) =>
    (Array.isArray(value) ? value : value.split(/[;\r\n]+/))
      .map((item) => item.trim())
      .filter((item) => item !== ""),
  )
  .refine(
    (items) => items.every((item) => /^(x500:)?\/\S/i.test(item)),
    "must be X500 addresses (x500:/o=…), separated by ';'",
  );

/**
 * `X500:<dn>` for each DN, once: Exchange compares proxy addresses case-insensitively, so two
 * spellings of one DN would be one address (the first spelling is kept).
 */
export function x500Of(distinguishedNames: readonly string[]): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const value of distinguishedNames) {
    const dn = value.trim().replace(/^x500:/i, "");
    const key = dn.toLowerCase();
    if (dn === "" || seen.has(key)) continue;
    seen.add(key);
    result.push(`X500:${dn}`);
  }
  return result;
}
