/** Why the secrets key could not be read from Key Vault (key-vault-key-source.ts). */
export type Problem = { readonly problem: "absent" | "forbidden" | "disabled"; readonly detail: string };

/** The operator's next step for each problem; names roles and commands, never a value. */
export function explain(read: Problem, mayCreate: boolean): string {
  switch (read.problem) {
    case "forbidden": {
      const role = mayCreate ? "Key Vault Secrets Officer" : "Key Vault Secrets User";
      return `access refused (${read.detail}): this identity needs ${role} on the vault (a new role assignment takes minutes)`;
    }
    case "disabled":
      return "every version is disabled: enable one, or add a new version (az keyvault secret set)";
    case "absent":
      return mayCreate
        ? "it does not exist, even after creating it"
        : "it does not exist (yet): the admin API creates it on its first start, or add one with az keyvault secret set";
  }
}

/** What an SDK error says (its status and code), never its message or a value. */
export function problemOf(error: unknown, label: string): Problem {
  const { statusCode, code } = error as { statusCode?: number; code?: string };
  if (statusCode === undefined) {
    // No answer (network, or the SDK's own refusal such as a challenge for another domain): its
    // message names the cause. The SDK's messages never quote a request body (the key, on create).
    const message = error instanceof Error ? error.message.slice(0, 240) : String(error);
    throw new Error(`${label}: no answer from the vault (${message})`);
  }
  const detail = `HTTP ${statusCode} ${code ?? ""}`.trim();
  if (statusCode === 404) return { problem: "absent", detail };
  // 403: no role (yet), or a version disabled between the listing and the read: read again.
  if (statusCode === 403) return { problem: "forbidden", detail };
  throw new Error(`${label}: the vault answered ${detail}`);
}
