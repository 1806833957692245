import { createServer, type Server, type Socket } from "node:net";
import { connect } from "node:net";

/**
 * A TCP proxy in front of the test PostgreSQL that can be cut: what a database restart looks like
 * to the service's pool (open connections dropped, new ones refused until it is back). Tests give
 * the code under test a store on `url`, so it meets node-postgres's real errors.
 */
export interface DatabaseOutageProxy {
  /** The database URL, through the proxy. */
  readonly url: string;
  /** Drops every connection and refuses new ones until `restore()`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startDatabaseOutageProxy(databaseUrl: string): Promise<DatabaseOutageProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    // Accepted and closed at once while down: the driver reads "Connection terminated".
    if (down) return void client.destroy();
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      // A reset while cutting is the point; neither side's error may crash the test.
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no TCP address");
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  return {
    url: url.toString(),
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
