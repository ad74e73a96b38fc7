/**
 * The processes a bench starts: every one is stopped when the bench ends, also when it fails or is interrupted
 * (SIGINT, SIGTERM: exit 130), and `after` runs then (a temp dir removed). Returns `track`, which a bench wraps each
 * Bun.spawn in.
 */
export function trackChildren(after: () => void = () => {}) {
  const children = new Set<ReturnType<typeof Bun.spawn>>();
  const cleanUp = () => {
    for (const p of children) p.kill("SIGKILL");
    after();
  };
  process.on("exit", cleanUp);
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      cleanUp();
      process.exit(130);
    });
  return <P extends ReturnType<typeof Bun.spawn>>(p: P): P => {
    children.add(p);
    void p.exited.then(() => children.delete(p));
    return p;
  };
}
