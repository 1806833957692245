import { useEffect, useState } from "preact/hooks";
import { loadAuthConfig, type AuthConfig } from "./auth-config.ts";
import { startEntraSignIn } from "./entra.ts";
import { signIn, type Session } from "./session.ts";

/**
 * Sign-in. Entra mode: a button that runs MSAL's redirect flow. Local mode: the link printed by
 * `npm start` signs in directly; otherwise paste a token from `npm run -s token -- --role Admin`.
 */
export function SignInPage(props: { session: Session | undefined }) {
  const [config, setConfig] = useState<AuthConfig | undefined>(undefined);
  const [configError, setConfigError] = useState<string | undefined>(undefined);
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => {
    loadAuthConfig().then(setConfig, (caught: unknown) => setConfigError(String(caught)));
  }, []);

  const submit = (event: Event) => {
    event.preventDefault();
    if (signIn(token) === undefined) {
      setError("That is not a token: paste the whole value (three parts separated by dots).");
      return;
    }
    window.location.hash = "#/runbooks";
  };

  return (
    <section class="sign-in">
      <h1 tabIndex={-1}>Sign in</h1>
      {props.session !== undefined && (
        <p>
          Signed in as <strong>{props.session.name}</strong>. <a href="#/runbooks">Continue</a>
        </p>
      )}
      {configError !== undefined && (
        <p class="error-text" role="alert">
          Could not reach the admin API: {configError}
        </p>
      )}
      {config?.mode === "entra" && (
        <p>
          <button type="button" class="primary" onClick={() => void startEntraSignIn(config)}>
            Sign in with Microsoft Entra ID
          </button>
        </p>
      )}
      <form class="card token-form" onSubmit={submit}>
        <h2>{config?.mode === "entra" ? "Or paste an access token" : "Paste a token"}</h2>
        <p class="hint">
          {config?.mode === "entra"
            ? "An access token for the admin API (audience of its app registration)."
            : "Open the Dashboard link printed by npm start, or create a token with npm run -s token -- --role Admin and paste it here."}
        </p>
        <label for="token-input">Token</label>
        <textarea
          id="token-input"
          rows={4}
          value={token}
          spellcheck={false}
          autocomplete="off"
          onInput={(event) => setToken(event.currentTarget.value)}
          aria-describedby={error === undefined ? undefined : "token-error"}
        />
        {error !== undefined && (
          <p id="token-error" class="error-text" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </section>
  );
}
