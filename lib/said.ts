/**
 * What `run` has told the operator, remembered in the store, so that a warning about the same thing is said once
 * per change instead of at every start: `run --once --quiet` from cron would otherwise mail the same lines every few
 * minutes (an interval below the spec's, a SCRIPT reward refused). A store that can't be read or written only costs
 * a repeated line: the line is said.
 */
import * as v from "valibot";
import type { Logger } from "./log.ts";
import type { Store } from "./store/index.ts";

const SaidSchema = v.object({ lines: v.array(v.string()) });

/** Lines remembered per topic, the newest kept. */
const MAX_LINES = 1000;

/**
 * The lines of `lines` not said before under `topic`, which are remembered as said. `replace`: the topic is a state
 * (the configuration's warnings), so what is remembered is `lines` alone and a warning that went and came back is
 * said again; otherwise each line is said once (within the newest MAX_LINES).
 */
export async function notSaid(
  store: Store,
  topic: "config" | "rewards",
  lines: readonly string[],
  replace: boolean,
): Promise<string[]> {
  const cache = store.cache(`said_${topic}`, SaidSchema);
  const before = (await cache.get().catch(() => undefined))?.data.lines ?? [];
  const known = new Set(before);
  const fresh = lines.filter((l) => !known.has(l));
  const kept = replace ? [...lines] : [...before, ...fresh].slice(-MAX_LINES);
  if (fresh.length || kept.length !== before.length) await cache.set({ lines: kept }).catch(() => undefined);
  return fresh;
}

/**
 * Which of `run`'s configuration warnings to say: every one, or with `quiet` (cron) only those the last run did not
 * say, i.e. once per change of the configuration. The store is opened here, before `run` opens it for the agent:
 * the warnings come first, and one that can't be remembered is said.
 */
export async function configWarningsToSay(
  dir: string,
  lines: readonly string[],
  o: { quiet: boolean; logger: Logger },
): Promise<readonly string[]> {
  try {
    const { openStore } = await import("./store/index.ts");
    const fresh = await notSaid(await openStore({ dir, logger: o.logger, sweep: false }), "config", lines, true);
    return o.quiet ? fresh : lines;
  } catch {
    return lines;
  }
}
