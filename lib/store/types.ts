export type WithLock = <R>(name: string, fn: () => Promise<R>, opts?: { timeoutMs?: number }) => Promise<R>;

/** Queue, cache, counter and lock names become path segments: keep them plain. */
export const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function checkName(kind: string, name: string): string {
  if (!NAME_RE.test(name)) throw new Error(`store: invalid ${kind} name ${JSON.stringify(name)} (want ${NAME_RE})`);
  return name;
}
