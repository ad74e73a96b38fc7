/**
 * The 429 gates (docs/service-api.md §1.5): monotonic times before which no request may reach the service (a wall
 * clock set back must not stretch a wait): per endpoint (`METHOD route`), set by its own 429, and for all of them,
 * set by a 429 that came while another endpoint's gate was closed. VyHub does not say whether a limit is per endpoint
 * or per key: the first 429 pauses what was refused; a second endpoint refused within that time shows the limit is
 * the key's. One set per transport; the attempt closes a gate, the request loop waits at it.
 */
import type { Clock } from "../clock.ts";

export interface RateGates {
  /** The monotonic time before which `scope` may not send (-Infinity: open). */
  until(scope: string): number;
  /** Closes `scope`'s gate for `ms`, and every endpoint's when another endpoint's gate is closed already. */
  close(scope: string, ms: number): void;
  /** The monotonic time by which every gate is open again (-Infinity: all open). */
  latest(): number;
}

export function createGates(clock: Clock): RateGates {
  const gates = new Map<string, number>();
  let allUntil = -Infinity;
  return {
    until: (scope) => Math.max(allUntil, gates.get(scope) ?? -Infinity),
    latest: () => Math.max(allUntil, ...gates.values()),
    close(scope, ms) {
      const now = clock.monotonic();
      const keyWide = [...gates].some(([other, until]) => other !== scope && until > now);
      gates.set(scope, Math.max(gates.get(scope) ?? -Infinity, now + ms));
      if (keyWide) allUntil = Math.max(allUntil, now + ms);
    },
  };
}
