type Listener = (...args: never[]) => void;

/** Typed listeners for the wrapped server's parts: a throwing listener is logged and never breaks the emitter. */
export class Emitter<E extends { [K in keyof E]: unknown[] }> {
  #listeners = new Map<keyof E, Set<Listener>>();

  constructor(private onError: (event: string, error: unknown) => void) {}

  on<K extends keyof E>(event: K, fn: (...args: E[K]) => void): () => void {
    const set = this.#listeners.get(event) ?? new Set();
    this.#listeners.set(event, set);
    set.add(fn as unknown as Listener);
    return () => set.delete(fn as unknown as Listener);
  }

  emit<K extends keyof E>(event: K, ...args: E[K]): void {
    for (const fn of this.#listeners.get(event) ?? []) {
      try {
        (fn as unknown as (...a: E[K]) => void)(...args);
      } catch (e) {
        this.onError(String(event), e);
      }
    }
  }
}
