/**
 * Reads deploy/hub-agent.service (and its template, deploy/hub-agent@.service) as systemd does, as far as the tests
 * need: sections, repeated keys, comments, and the specifiers it uses (%S the state root, %E the configuration
 * root), so a test can start the binary with the unit's own environment, working directory and command line in a
 * temporary root.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const UNIT_FILE = join(import.meta.dir, "..", "..", "deploy", "hub-agent.service");
/** The template unit, one process per server: hub-agent@<name>.service. */
export const TEMPLATE_FILE = join(import.meta.dir, "..", "..", "deploy", "hub-agent@.service");

export interface Setting {
  section: string;
  key: string;
  value: string;
}

export interface Unit {
  /** Every value of a key in a section, in order (systemd keys may repeat). */
  all(section: string, key: string): string[];
  /** The last value of a key (what systemd uses for a single-valued key). */
  get(section: string, key: string): string | undefined;
  /** Every setting, in the file's order. */
  settings: Setting[];
}

export function readUnit(file = UNIT_FILE): Unit {
  const entries: Setting[] = [];
  let section = "";
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) section = header[1] as string;
    else {
      const eq = line.indexOf("=");
      entries.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() });
    }
  }
  const all = (s: string, k: string) => entries.filter((e) => e.section === s && e.key === k).map((e) => e.value);
  return { all, get: (s, k) => all(s, k).at(-1), settings: entries };
}

/**
 * %S and %E for a system service, under `root` instead of / (and %% for a literal %); %i, a template's instance
 * name as written, when `instance` is given.
 */
export function specifiers(value: string, root: string, instance?: string): string {
  return value.replace(/%([SEi%])/g, (whole, c: string) =>
    c === "S" ? join(root, "var/lib") : c === "E" ? join(root, "etc") : c === "i" ? (instance ?? whole) : "%",
  );
}

/** The unit's Environment= lines (NAME=value, each line one assignment here) with specifiers resolved. */
export function unitEnvironment(unit: Unit, root: string): Record<string, string> {
  return Object.fromEntries(
    unit.all("Service", "Environment").map((assignment) => {
      const eq = assignment.indexOf("=");
      return [assignment.slice(0, eq), specifiers(assignment.slice(eq + 1), root)];
    }),
  );
}

/** An EnvironmentFile as systemd reads it: NAME=value lines, # comments and blank lines ignored. */
export function environmentFile(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#") && l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}
