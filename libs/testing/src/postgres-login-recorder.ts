import { once } from "node:events";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";

export interface LoginRecorder {
  /** postgres://matoolkit-orchestrator@127.0.0.1:<port>/matoolkit (no password). */
  readonly url: string;
  /** Every password a client presented, in order. */
  readonly passwords: string[];
  close(): Promise<void>;
}

/**
 * A PostgreSQL server's login, as far as the password: it answers the StartupMessage with
 * AuthenticationCleartextPassword (what Azure Database for PostgreSQL asks of Entra logins),
 * records the PasswordMessage, then refuses the login with SQLSTATE 28P01 as a server does for a
 * wrong password. That is all a client reveals about its password, so it is all we fake.
 */
export async function startLoginRecorder(): Promise<LoginRecorder> {
  const passwords: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffer = Buffer.alloc(0);
    let started = false;
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!started) {
        if (buffer.length < 4 || buffer.length < buffer.readInt32BE(0)) return;
        buffer = buffer.subarray(buffer.readInt32BE(0));
        started = true;
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])); // 'R', cleartext password
      }
      if (buffer.length < 5 || buffer.length < 1 + buffer.readInt32BE(1)) return;
      if (buffer[0] === 0x70) {
        const length = buffer.readInt32BE(1);
        passwords.push(buffer.subarray(5, 1 + length - 1).toString("utf8"));
        buffer = buffer.subarray(1 + length);
        const fields = Buffer.from("SFATAL\0C28P01\0Mlogin refused by the test recorder\0\0", "utf8");
        const header = Buffer.alloc(5);
        header[0] = 0x45; // 'E'
        header.writeInt32BE(4 + fields.length, 1);
        socket.end(Buffer.concat([header, fields]));
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `postgres://matoolkit-orchestrator@127.0.0.1:${port}/matoolkit`,
    passwords,
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
