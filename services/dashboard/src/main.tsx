import { render } from "preact";
import { App } from "./app.tsx";
import { takeTokenFromFragment } from "./auth/fragment-token.ts";
import { completeEntraRedirect } from "./auth/entra.ts";
import "./styles/app.css";

// A sign-in link from the start banner (#token=…) is consumed before the first render and
// removed from the address bar and history; an Entra redirect is completed the same way.
takeTokenFromFragment();
await completeEntraRedirect().catch((error: unknown) => {
  console.error("Entra sign-in did not complete", error);
});
const root = document.getElementById("app");
if (root !== null) render(<App />, root);
