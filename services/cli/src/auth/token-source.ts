/** Supplies the bearer token of each request; implementations cache and renew as they need. */
export interface TokenSource {
  token(): Promise<string>;
}
