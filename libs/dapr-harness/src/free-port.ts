import { createServer, type Server } from "node:net";

/**
 * A TCP port free on 127.0.0.1 right now: the OS picks it, we close it and hand it on. Another
 * process may take it in between (rare on loopback); the daemons fail loudly if so.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/**
 * Several distinct free ports (held open together, so none is handed out twice), none of them in
 * `avoid`: a port the caller already chose with freePort() is free again (it was closed), so the
 * OS may hand it out here too (a real-Dapr run once gave daprd's gRPC port the app's port:
 * "the 'dapr-grpc-port' argument value … conflicts with 'app-port'").
 */
export async function freePorts(count: number, avoid: readonly number[] = []): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = await new Promise<Server>((resolve, reject) => {
        const candidate = createServer();
        candidate.once("error", reject);
        candidate.listen(0, "127.0.0.1", () => resolve(candidate));
      });
      held.push(server);
      const address = server.address();
      if (typeof address !== "object" || address === null) throw new Error("no port");
      if (!avoid.includes(address.port)) ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
