/** A plain object to read keys from: not null, not an array (JSON answers, config tables, plugin messages). */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
