/**
 * The store's format across upgrades: `<storage.dir>/format` says which layout the store is in and which version
 * wrote it (`{"format":1,"version":"0.1.0"}`). A store without it is format 1 (0.1.0 wrote none). A newer build
 * reads every older format it has shipped (each record also carries its own `v`); a store in a format newer than
 * this build knows is refused before anything in it is read or written (StoreFormatError, exit 8), since reading
 * it could misread an entry and a record that fails its schema is quarantined: lost to the build that wrote it.
 *
 * The marker is created complete in one step (written beside, then linked into place, lock.ts): two builds that
 * open a new store at once cannot overwrite each other's, and an older build never lowers it.
 */
import { readFile } from "../fsio.ts";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { StoreWriteError } from "./errors.ts";
import { createLockFile } from "./lock.ts";

/** The newest format this build reads and the one it writes. A layout change raises it, with a reader for the old. */
export const STORE_FORMAT = 1;
export const FORMAT_FILE = "format";

declare const HUB_AGENT_VERSION: string | undefined;
/** What is recorded as the marker's writer: the release's version (packaging/build.ts), else package.json's. */
const VERSION = typeof HUB_AGENT_VERSION === "string" ? HUB_AGENT_VERSION : pkg.version;

export interface StoreFormat {
  format: number;
  /** The version that wrote the marker ("" when it names none); undefined without a marker (0.1.0's stores). */
  version?: string;
}

/** The store is in a format this build cannot read, or its marker is unreadable: not used (exit 8). */
export class StoreFormatError extends StoreWriteError {
  override name = "StoreFormatError";
  constructor(
    path: string,
    dir: string,
    /** What is wrong, without the fix (`doctor` shows them apart). */
    readonly problem: string,
    readonly fix: string,
  ) {
    super("EPERM", path, dir);
    this.message = `${problem}; ${fix}`;
  }
}

/** The format `dir` is in (format 1 without a marker); throws StoreFormatError when this build can't read it. */
export async function checkFormat(dir: string): Promise<StoreFormat> {
  const path = join(dir, FORMAT_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { format: 1 };
    throw e;
  }
  const found = parse(text);
  if (!found)
    throw new StoreFormatError(
      path,
      dir,
      `the store ${dir} has a format marker hub-agent ${VERSION} can't read (${path}): it is not used, so that ` +
        "nothing in it is misread",
      "run the hub-agent version that wrote it, or newer",
    );
  if (found.format > STORE_FORMAT)
    throw new StoreFormatError(
      path,
      dir,
      `the store ${dir} is in format ${found.format}, written by hub-agent ${found.version || "(unknown)"}; ` +
        `hub-agent ${VERSION} reads formats up to ${STORE_FORMAT}: it is not used, so that nothing in it is ` +
        "misread",
      `run hub-agent ${found.version || "of that version"} or newer on it`,
    );
  return found;
}

/**
 * checkFormat, then the marker written when the store has none (a new store, or one 0.1.0 made). Best effort: a
 * store that can't take it (a full or read-only disk) is still format 1, and is marked at the next open that can.
 */
export async function ensureFormat(dir: string): Promise<StoreFormat> {
  const found = await checkFormat(dir);
  if (found.version !== undefined) return found;
  const marker = { format: STORE_FORMAT, version: VERSION };
  const created = await createLockFile(join(dir, FORMAT_FILE), `${JSON.stringify(marker)}\n`).catch(() => undefined);
  // Another process marked it meanwhile: its marker is the one to go by.
  if (created === false) return checkFormat(dir);
  return created ? marker : found;
}

function parse(text: string): StoreFormat | undefined {
  try {
    const value = JSON.parse(text) as { format?: unknown; version?: unknown };
    if (!Number.isSafeInteger(value.format) || (value.format as number) < 1) return undefined;
    return { format: value.format as number, version: typeof value.version === "string" ? value.version : "" };
  } catch {
    return undefined;
  }
}
