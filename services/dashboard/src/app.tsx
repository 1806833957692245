import { useEffect, useState } from "preact/hooks";
import { onUnauthorized } from "./api/client.ts";
import { currentSession, onSessionChange, signOut, type Session } from "./auth/session.ts";
import { SignInPage } from "./auth/sign-in-page.tsx";
import { AlertsBanner } from "./components/alerts-banner.tsx";
import { BatchPage } from "./pages/batch/batch-page.tsx";
import { BatchesListPage } from "./pages/batches-list/batches-list-page.tsx";
import { PublishPage } from "./pages/runbooks/publish-page.tsx";
import { RunbookPage } from "./pages/runbooks/runbook-page.tsx";
import { RunbooksPage } from "./pages/runbooks/runbooks-page.tsx";
import { parseRoute, unreachable, useHash, type Route } from "./router.ts";

/** The shell: top navigation, the signed-in user, and the page the hash route names. */
export function App() {
  const hash = useHash();
  const session = useSession();
  const route = parseRoute(hash);

  useEffect(() => onUnauthorized(() => signOut()), []);
  // Focus the page heading on navigation so screen readers announce the new page.
  useEffect(() => {
    document.querySelector<HTMLElement>("main h1")?.focus();
  }, [hash]);

  if (session === undefined || route.page === "sign-in") {
    return (
      <div class="shell">
        <Header session={session} route={route} />
        <main id="main">
          <SignInPage session={session} />
        </main>
      </div>
    );
  }
  return (
    <div class="shell">
      <a class="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <Header session={session} route={route} />
      <main id="main">
        <AlertsBanner />
        {renderPage(route, session)}
      </main>
    </div>
  );
}

function renderPage(route: Route, session: Session) {
  switch (route.page) {
    case "runbooks":
      return <RunbooksPage session={session} />;
    case "runbook":
      return <RunbookPage key={route.name} name={route.name} session={session} />;
    case "publish":
      return <PublishPage key={route.name ?? ""} name={route.name} session={session} />;
    case "batches":
      return <BatchesListPage session={session} />;
    case "batch":
      return <BatchPage key={route.batchId} batchId={route.batchId} />;
    case "sign-in":
      return <SignInPage session={session} />;
    case "not-found":
      return (
        <section>
          <h1 tabIndex={-1}>Page not found</h1>
          <p>
            Nothing at <code>#/{route.path}</code>. Go to <a href="#/runbooks">runbooks</a> or{" "}
            <a href="#/batches">batches</a>.
          </p>
        </section>
      );
    default:
      return unreachable(route);
  }
}

function Header(props: { session: Session | undefined; route: Route }) {
  const section =
    props.route.page === "batches" || props.route.page === "batch"
      ? "batches"
      : props.route.page === "sign-in" || props.route.page === "not-found"
        ? undefined
        : "runbooks";
  return (
    <header class="topbar">
      <a class="brand" href="#/runbooks">
        matoolkit
      </a>
      {props.session !== undefined && (
        <nav aria-label="Main">
          <a href="#/runbooks" aria-current={section === "runbooks" ? "page" : undefined}>
            Runbooks
          </a>
          <a href="#/batches" aria-current={section === "batches" ? "page" : undefined}>
            Batches
          </a>
        </nav>
      )}
      {props.session !== undefined && (
        <div class="user">
          <span class="user-name" data-testid="user-name">
            {props.session.name}
          </span>
          <span class="user-roles">{props.session.roles.join(", ") || "no role"}</span>
          <button type="button" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}

function skipToMain(event: Event) {
  event.preventDefault();
  document.querySelector<HTMLElement>("main h1")?.focus();
}

function useSession(): Session | undefined {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  return session;
}
