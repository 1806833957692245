import { useEffect, useState } from "preact/hooks";

/**
 * Hash routes (#/runbooks, #/batches/12): the server serves one index.html for every path and
 * never sees the route, so no server-side routing table is needed.
 */
export type Route =
  | { readonly page: "sign-in" }
  | { readonly page: "runbooks" }
  | { readonly page: "runbook"; readonly name: string }
  | { readonly page: "publish"; readonly name: string | undefined }
  | { readonly page: "batches" }
  | { readonly page: "batch"; readonly batchId: number }
  | { readonly page: "not-found"; readonly path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "").split("?")[0] ?? "";
  const parts = path
    .split("/")
    .filter((part) => part.length > 0)
    .map(decodeURIComponent);
  const [first, second, third] = parts;
  if (parts.length === 0) return { page: "runbooks" };
  if (first === "sign-in" && parts.length === 1) return { page: "sign-in" };
  if (first === "publish" && parts.length <= 2) return { page: "publish", name: second };
  if (first === "runbooks") {
    if (second === undefined) return { page: "runbooks" };
    if (third === undefined) return { page: "runbook", name: second };
  }
  if (first === "batches") {
    if (second === undefined) return { page: "batches" };
    if (third === undefined && /^[1-9]\d*$/.test(second)) return { page: "batch", batchId: Number(second) };
  }
  return { page: "not-found", path };
}

/** The query part of the hash (#/batches?status=running) as parameters. */
export function hashQuery(hash: string = window.location.hash): URLSearchParams {
  const index = hash.indexOf("?");
  return new URLSearchParams(index === -1 ? "" : hash.slice(index + 1));
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case "sign-in":
      return "#/sign-in";
    case "runbooks":
      return "#/runbooks";
    case "runbook":
      return `#/runbooks/${encodeURIComponent(route.name)}`;
    case "publish":
      return route.name === undefined ? "#/publish" : `#/publish/${encodeURIComponent(route.name)}`;
    case "batches":
      return "#/batches";
    case "batch":
      return `#/batches/${route.batchId}`;
    case "not-found":
      return `#/${route.path}`;
    default:
      return unreachable(route);
  }
}

export function navigate(route: Route): void {
  window.location.hash = hrefOf(route);
}

export function useHash(): string {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const update = () => setHash(window.location.hash);
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return hash;
}

export function unreachable(value: never): never {
  throw new Error(`Unexpected value ${JSON.stringify(value)}`);
}
