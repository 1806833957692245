import type { Command } from "commander";
import { entraSettingsOf } from "../auth/token-source-for.ts";
import {
  LOCAL_TOKEN_TTL_SECONDS,
  localIdentity,
  localKeyExists,
  requireLocalKey,
} from "../auth/local-token.ts";
import { localSigningKeyPath } from "@matoolkit/auth";
import { action, type CommandRuntime } from "./action.ts";
import type { Session } from "./session.ts";

/** 000 "Authentication Flow": auth login | status | logout. */
export function registerAuthCommands(program: Command, runtime: CommandRuntime): void {
  const auth = program
    .command("auth")
    .description("sign in to the admin API (Entra ID device code) or check local mode");

  auth
    .command("login")
    .description("entra mode: sign in with a device code (once; later commands are silent)")
    .action(
      action(runtime, async (session) => {
        if (session.settings.authMode === "local") {
          await requireLocalKey(session.settings.dataDir);
          session.output.line(
            `auth-mode is local: no sign-in needed; each command signs a token with role ${session.settings.role} using ${localSigningKeyPath(session.settings.dataDir)}.`,
          );
          return;
        }
        const entra = entraSettingsOf(session.settings, session.stateDir);
        const { signIn } = await import("../auth/entra/entra-session.ts");
        // The device code message goes to stderr: stdout stays clean for --json.
        const { record, token } = await signIn(entra, (message) =>
          session.context.stderr.write(`${message}\n`),
        );
        session.output.result(
          { mode: "entra", account: record.username, tenantId: record.tenantId, expiresOn: token.expiresOn },
          () => session.output.line(`Signed in as ${record.username} (tenant ${record.tenantId}).`),
        );
      }),
    );

  auth
    .command("status")
    .description("show the auth mode, the account and when its token expires (never the token)")
    .action(action(runtime, async (session) => printStatus(session)));

  auth
    .command("logout")
    .description("entra mode: delete the token cache and the saved account")
    .action(
      action(runtime, async (session) => {
        const { signOut } = await import("../auth/entra/entra-session.ts");
        const removed = await signOut(session.stateDir);
        session.output.result({ removed }, () =>
          session.output.line(
            removed.length === 0 ? "Not signed in." : `Signed out (removed ${removed.join(", ")}).`,
          ),
        );
      }),
    );
}

async function printStatus(session: Session): Promise<void> {
  const { settings, output } = session;
  if (settings.authMode === "local") {
    const keyFile = localSigningKeyPath(settings.dataDir);
    const present = await localKeyExists(settings.dataDir);
    output.result(
      {
        mode: "local",
        account: localIdentity(settings.role),
        role: settings.role,
        keyFile,
        keyPresent: present,
        tokenLifetimeSeconds: LOCAL_TOKEN_TTL_SECONDS,
      },
      () =>
        output.fields([
          ["Mode", "local"],
          ["Account", `${localIdentity(settings.role)} (role ${settings.role})`],
          ["Signing key", `${keyFile}${present ? "" : " (missing: start the server or set data-dir)"}`],
          ["Token", `signed per command, valid ${LOCAL_TOKEN_TTL_SECONDS / 60} minutes`],
        ]),
    );
    return;
  }
  const entra = entraSettingsOf(settings, session.stateDir);
  const { savedAccount, silentToken } = await import("../auth/entra/entra-session.ts");
  const account = await savedAccount(session.stateDir);
  if (account === undefined) {
    output.result({ mode: "entra", signedIn: false, tenantId: entra.tenantId }, () =>
      output.fields([
        ["Mode", "entra"],
        ["Tenant", entra.tenantId],
        ["Account", "not signed in (run `matoolkit auth login`)"],
      ]),
    );
    return;
  }
  // Silent: from the cache, or refreshed with the refresh token; never prompts.
  const token = await silentToken(entra, account);
  output.result(
    {
      mode: "entra",
      signedIn: true,
      account: account.username,
      tenantId: account.tenantId,
      expiresOn: token.expiresOn,
    },
    () =>
      output.fields([
        ["Mode", "entra"],
        ["Account", account.username],
        ["Tenant", account.tenantId],
        ["Scope", entra.scope],
        ["Token expires", token.expiresOn],
      ]),
  );
}
