/** Where the CLI writes: the process's streams in main.ts, string buffers in tests. */
export interface OutputStream {
  write(text: string): unknown;
  /** True on a terminal: tables are then fitted to `columns` and progress redrawn in place. */
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/**
 * Everything the CLI takes from its process, passed in by the entry point (only main.ts reads
 * process.env), so the same code runs in a child process and in an in-process test.
 */
export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The user's home directory (HOME on POSIX), where `~/.matoolkit/config.json` lives. */
  readonly home: string;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly fetch: typeof fetch;
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => Date;
}
