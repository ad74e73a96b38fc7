/**
 * The econ lines captured from real servers with a real client on them (test/fixtures/econ/*.txt), by section, as
 * the econ transport hands them on: `[category]: text`. Every captured line must parse as an econ line.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { econText, parseEconLine } from "../../../lib/game/transports/econ.ts";

export type EconFixture = (section: string) => string[];

export function econFixture(file: "teeworlds-0.7.5.txt" | "ddnet-16.4.txt"): EconFixture {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const raw of readFileSync(join(import.meta.dir, "..", "..", "fixtures", "econ", file), "utf8").split("\n")) {
    if (raw.startsWith("## ")) sections.set(raw.slice(3).split(" (")[0]!, (current = []));
    else if (raw && !raw.startsWith("# ")) {
      const line = parseEconLine(raw);
      if (!line || !current) throw new Error(`${file}: not an econ line: ${raw}`);
      current.push(econText(line));
    }
  }
  return (section) => {
    const lines = sections.get(section);
    if (!lines) throw new Error(`${file} has no section "${section}"`);
    return lines;
  };
}

/** How long `re` takes on `line`, in ms: the best of three runs, so a GC pause doesn't count. */
export function matchMs(re: { exec(line: string): unknown }, line: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    re.exec(line);
    best = Math.min(best, performance.now() - t);
  }
  return best;
}
