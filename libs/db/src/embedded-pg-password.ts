import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";

/**
 * The embedded cluster's superuser password: random per data directory, kept beside it in
 * `<dataDir>.password`, mode 0600, owned by the user running matoolkit. The server listens on
 * 127.0.0.1, which every local user can reach, so this file is the only thing between another
 * local account and a PostgreSQL superuser (`COPY … FROM PROGRAM` runs commands).
 */
export function embeddedPasswordFile(dataDir: string): string {
  return `${dataDir}.password`;
}

/**
 * The password in the file, created when missing. Created under a temporary name and linked into
 * place (never replaces a file another start created at the same moment); read without following
 * a symlink, and refused unless it is a regular file of ours that nobody else can read or change.
 */
export function readOrCreatePassword(file: string): string {
  const existing = readPasswordFile(file);
  if (existing !== undefined) return existing;
  const staging = `${file}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = openSync(
    staging,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, `${randomBytes(32).toString("base64url")}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(staging, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(staging, { force: true });
  }
  const created = readPasswordFile(file);
  if (created === undefined)
    throw new Error(`the embedded PostgreSQL password file ${file} vanished as it was created`);
  return created;
}

/** The password in an existing file (undefined when there is none); throws when it is exposed. */
export function readPasswordFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP")
      throw new Error(`the embedded PostgreSQL password file ${file} is a symbolic link: refused`);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    const owner = process.getuid?.();
    if (!stat.isFile() || (owner !== undefined && stat.uid !== owner) || (stat.mode & 0o077) !== 0) {
      throw new Error(
        `the embedded PostgreSQL password file ${file} can be read or changed by other users ` +
          `(it must be a file of the user running matoolkit, mode 0600): anyone who read it can log in as ` +
          `the database superuser. Check who had access, then chmod 600 it, or remove the data directory and the file to start over`,
      );
    }
    const password = readFileSync(fd, "utf8").trim();
    // Printable ASCII: the same bytes for the client, the verifier below and SASLprep on the server.
    if (!/^[\x21-\x7e]{16,}$/u.test(password)) {
      throw new Error(
        `the embedded PostgreSQL password file ${file} does not hold a password (16 or more printable ASCII characters)`,
      );
    }
    return password;
  } finally {
    closeSync(fd);
  }
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677, as libpq's
 * PQencryptPasswordConn builds it): `ALTER ROLE … PASSWORD '<verifier>'` sets the password without
 * the plain text ever reaching the server, so no server log line can show it.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}
