/**
 * Group commit: items submitted while a flush is running wait and go together in the next flush,
 * so N concurrent deliveries cost one transaction instead of N. A lone item is flushed at once
 * (no timer, no added latency). If a flush fails, its items are retried one by one, so one item
 * that cannot be processed fails alone and the others go through (their handlers are idempotent:
 * the failed group changed nothing, its transaction rolled back).
 */
export interface GroupCommit<T> {
  submit(item: T): Promise<void>;
}

export function createGroupCommit<T>(options: {
  readonly maxItems: number;
  readonly flush: (items: readonly T[]) => Promise<void>;
}): GroupCommit<T> {
  interface Waiting {
    readonly item: T;
    readonly resolve: () => void;
    readonly reject: (error: unknown) => void;
  }
  const waiting: Waiting[] = [];
  let flushing = false;

  const run = async (): Promise<void> => {
    flushing = true;
    try {
      while (waiting.length > 0) {
        const group = waiting.splice(0, options.maxItems);
        try {
          await options.flush(group.map((entry) => entry.item));
          for (const entry of group) entry.resolve();
        } catch (groupError) {
          if (group.length === 1) {
            group[0]!.reject(groupError);
            continue;
          }
          for (const entry of group) {
            try {
              await options.flush([entry.item]);
              entry.resolve();
            } catch (error) {
              entry.reject(error);
            }
          }
        }
      }
    } finally {
      flushing = false;
    }
  };

  return {
    submit(item) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (!flushing) void run();
      });
    },
  };
}
