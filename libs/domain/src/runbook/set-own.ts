/** `target[name] = value`, except that a property named "__proto__" stays data (no prototype change). */
export function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === "__proto__") {
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[name] = value;
  }
}
