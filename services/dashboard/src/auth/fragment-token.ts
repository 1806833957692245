import { signIn } from "./session.ts";

/**
 * Takes `#token=<jwt>` (the local-mode sign-in link printed by `npm start`) into the session and
 * replaces the URL so the token stays out of history, bookmarks and screenshots.
 */
export function takeTokenFromFragment(): void {
  const match = /^#token=([^&]+)/.exec(window.location.hash);
  if (match?.[1] === undefined) return;
  signIn(decodeURIComponent(match[1]));
  history.replaceState(null, "", `${window.location.pathname}${window.location.search}#/runbooks`);
}
