/**
 * The keys whose values differ between two configurations, as dotted paths (`api.timeout`, `hooks.on_ban`), for
 * `run`'s SIGHUP line: names only, never values, since some are secrets.
 */
import { isRecord } from "../is-record.ts";

export function changedKeys(a: unknown, b: unknown, prefix = ""): string[] {
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedKeys(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix || "(all)"];
}
