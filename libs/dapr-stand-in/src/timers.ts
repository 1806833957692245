/**
 * Owns every timer a component starts so shutdown can clear them all, and unrefs them so a
 * forgotten stand-in never keeps a test process alive.
 */
export class TimerSet {
  private readonly active = new Map<symbol, NodeJS.Timeout>();

  after(delayMs: number, callback: () => void): symbol {
    const id = Symbol("timer");
    this.schedule(id, delayMs, callback);
    return id;
  }

  /** Fires at an absolute time; delays beyond setTimeout's 24.8-day limit are re-armed in steps. */
  at(when: Date, now: () => Date, callback: () => void): symbol {
    const id = Symbol("timer");
    const arm = (): void => {
      const remaining = when.getTime() - now().getTime();
      if (remaining > MAX_TIMEOUT_MS) this.schedule(id, MAX_TIMEOUT_MS, arm);
      else this.schedule(id, Math.max(0, remaining), callback);
    };
    arm();
    return id;
  }

  clear(id: symbol): void {
    const timer = this.active.get(id);
    if (timer !== undefined) clearTimeout(timer);
    this.active.delete(id);
  }

  clearAll(): void {
    for (const timer of this.active.values()) clearTimeout(timer);
    this.active.clear();
  }

  private schedule(id: symbol, delayMs: number, callback: () => void): void {
    const timer = setTimeout(() => {
      this.active.delete(id);
      callback();
    }, delayMs);
    timer.unref();
    this.active.set(id, timer);
  }
}

const MAX_TIMEOUT_MS = 2_147_483_647;
