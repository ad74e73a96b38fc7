/**
 * Reading and writing validated JSON records, and quarantine: a record that fails JSON parse or its
 * schema is moved to `<dir>/corrupt/<key-path>.<timestamp>` for an operator to inspect, reported
 * once, and read as absent. It is never read as "empty" and never blocks the other records. So is a record larger
 * than the cap: its size is checked before it is read, so one huge file cannot exhaust memory.
 */
import { exists, link, mkdir, openToRead, readdir, rename, stat, unlink } from "../fsio.ts";
import { dirname, join, relative, sep } from "node:path";
import type { Storage } from "unstorage";
import * as v from "valibot";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { type MadeFile, type OnShown, isMissing, keyToPath } from "./driver.ts";
import { foreignFile } from "./secure.ts";

export interface QuarantineRecord {
  /** The store key, e.g. `queue:ban:000001764000000000-…`. */
  key: string;
  /** Where the file was moved. */
  file: string;
  /** Why: a JSON parse error or a schema summary. */
  reason: string;
  at: number;
}

/** What the operator must do about quarantined records (`queue status` and `doctor` say it alike). */
export const QUARANTINE_FIX =
  "each file is named after the record it was (a queue:ban:… one is a ban that was never sent: issue it again if it still holds); look at them, then delete them: hub-agent never reads them again";

/** A file in `<dir>/corrupt/`: the store key it was and when it was moved there (from its name). */
export interface CorruptFile {
  key: string;
  file: string;
  at: number;
}

/**
 * Every file in `<dir>/corrupt/`, newest first: what any process quarantined, kept until the operator removes it.
 * Names are `<key path>.<ms>` (`-<suffix>` when two land in one ms); another name counts by its modification time.
 */
export async function listCorrupt(dir: string): Promise<CorruptFile[]> {
  const root = join(dir, "corrupt");
  const out: CorruptFile[] = [];
  const walk = async (at: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(at, { withFileTypes: true });
    } catch (e) {
      if (isMissing(e)) return;
      throw e;
    }
    for (const entry of entries) {
      const file = join(at, entry.name);
      if (entry.isDirectory()) {
        await walk(file);
        continue;
      }
      const path = relative(root, file).split(sep).join(":");
      const m = /^(.*)\.(\d{10,})(?:-[0-9a-f]{8})?$/.exec(path);
      const when = m
        ? Number(m[2])
        : await stat(file).then(
            (s) => s.mtimeMs,
            () => 0,
          );
      out.push({ key: m ? (m[1] as string) : path, file, at: when });
    }
  };
  await walk(root);
  return out.sort((a, b) => b.at - a.at);
}

type Verdict<T> = { ok: true; value: T } | { ok: false; reason: string };
/** Validates a parsed record; returns the value or a reason it is unusable. */
export type Check<T> = (value: unknown) => Verdict<T> | Promise<Verdict<T>>;

/** A Check from a valibot schema, plus an optional extra rule (e.g. the id must match the key). */
export function schemaCheck<T>(
  schema: v.GenericSchema<unknown, T>,
  extra?: (value: T) => string | undefined | Promise<string | undefined>,
): Check<T> {
  return async (input) => {
    const result = v.safeParse(schema, input);
    if (!result.success) return { ok: false, reason: v.summarize(result.issues) };
    const problem = await extra?.(result.output);
    return problem ? { ok: false, reason: problem } : { ok: true, value: result.output };
  };
}

/**
 * The largest record read: 64 MiB, four times the default response cap (api.max_response_bytes), so a cached ban
 * list fits; queue entries are a few hundred bytes.
 */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: true });

async function decode<T>(bytes: Uint8Array, check: Check<T>): Promise<Verdict<T>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch (e) {
    return { ok: false, reason: `not valid JSON: ${(e as Error).message}` };
  }
  return check(parsed);
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
const code = (e: unknown) => (e as NodeJS.ErrnoException).code;
/**
 * A record file's bytes, or its size when it is over `maxBytes` (measured on the opened file, so the file judged is
 * the file read, in one open); undefined when there is none. Only the store's owner writes its records: one another
 * user owns came in through a folder they can reach, and is refused (secure.ts; the fstat is made anyway).
 */
async function readCapped(
  path: string,
  maxBytes: number,
  dir: string,
): Promise<Uint8Array | { size: number } | undefined> {
  const uid = process.getuid?.();
  try {
    const fh = await openToRead(path);
    try {
      const { size, uid: owner } = await fh.stat();
      if (uid !== undefined && owner !== uid) throw await foreignFile(dir, path, owner);
      return size > maxBytes ? { size } : await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
}

export interface WriteOptions {
  fsync?: boolean;
  shown?: OnShown;
  checked?: boolean;
  /** Hears the file written, as it was before it took its name (driver.ts, atomicWrite). */
  made?: (file: MadeFile) => void;
}

export interface Records {
  /**
   * The valid record at `key`, or undefined when it is missing or had to be quarantined; `quarantine: false` for a
   * record written unflushed, which a power cut may leave torn: read as missing, replaced by the next write.
   */
  read<T>(key: string, check: Check<T>, opts?: { quarantine?: boolean }): Promise<T | undefined>;
  /**
   * Serialises `record`, checks that it reads back valid (so it is never written only to be quarantined), writes
   * atomically; `fsync: false` for a note whose loss to a power cut costs nothing (box.ts); `shown`: called once the
   * record is in place, before it is flushed (atomicWrite); `checked`: the caller has `record` from `check`'s own
   * schema (a list the service client has just validated), so it is not validated a second time.
   */
  write<T>(key: string, record: unknown, check: Check<T>, opts?: WriteOptions): Promise<void>;
  /** `write` of a record the caller has serialised (cache.ts: one serialisation both hashed and written). */
  writeText<T>(key: string, text: string, check: Check<T>, opts?: WriteOptions): Promise<void>;
  /** Deletes `key`; false when it was already gone. */
  remove(key: string): Promise<boolean>;
  quarantined: QuarantineRecord[];
}

export function createRecords(
  storage: Storage,
  dir: string,
  logger: Logger,
  clock: Clock,
  maxBytes = MAX_RECORD_BYTES,
): Records {
  const quarantined: QuarantineRecord[] = [];
  const oversize = (size: number) => `${size} bytes, larger than the ${maxBytes}-byte cap for a record; not read`;

  /** The bytes at `key`, or the reason they were not read (too large); undefined when there is no record. */
  async function readBytes(key: string): Promise<Uint8Array | { tooLarge: string } | undefined> {
    const read = await readCapped(keyToPath(dir, key), maxBytes, dir);
    return read && "size" in read ? { tooLarge: oversize(read.size) } : read;
  }

  /**
   * Moves the file at `key` aside. Returns "retry" when what was moved turned out to be a newer,
   * valid version written after our read (it is put back unless an even newer one already took its
   * place), "gone" when the file disappeared first, "moved" otherwise.
   */
  async function quarantine<T>(key: string, seen: Uint8Array | undefined, reason: string, check: Check<T>) {
    const src = keyToPath(dir, key);
    const at = clock.now();
    let dest = join(dir, "corrupt", `${key.split(":").join("/")}.${at}`);
    if (await exists(dest)) dest += `-${crypto.randomUUID().slice(0, 8)}`;
    await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    try {
      await rename(src, dest);
    } catch (e) {
      if (code(e) === "ENOENT") return "gone";
      throw e;
    }
    // A file small enough to read that differs from what we judged may be a newer, valid version.
    const read = await readCapped(dest, maxBytes, dir);
    const moved = read && !("size" in read) ? read : undefined;
    if (moved && !(seen && sameBytes(moved, seen)) && (await decode(moved, check)).ok) {
      // link() does not overwrite, so a version written after our rename wins over this one.
      await link(dest, src).catch(async (e) => {
        if (code(e) !== "EEXIST") await rename(dest, src); // filesystems without hard links
      });
      await unlink(dest).catch(() => {});
      return "retry";
    }
    quarantined.push({ key, file: dest, reason, at });
    logger.warn("unreadable record moved to quarantine", { key, file: dest, reason });
    return "moved";
  }

  async function writeText<T>(key: string, text: string, check: Check<T>, opts?: WriteOptions) {
    const result = opts?.checked ? { ok: true as const } : await check(JSON.parse(text));
    if (!result.ok) throw new Error(`store: refusing to write invalid record ${key}: ${result.reason}`);
    const size = Buffer.byteLength(text);
    if (size > maxBytes)
      throw new Error(`store: refusing to write record ${key}: ${size} bytes, larger than the ${maxBytes}-byte cap`);
    // Through the driver either way: a full or read-only disk is one StoreWriteError, reported once (driver.ts).
    await storage.setItemRaw(key, text, {
      ...(opts?.fsync === false ? { fsync: false } : {}),
      ...(opts?.shown ? { shown: opts.shown } : {}),
      ...(opts?.made ? { made: opts.made } : {}),
    });
  }

  return {
    quarantined,
    async read<T>(key: string, check: Check<T>, opts?: { quarantine?: boolean }) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const bytes = await readBytes(key);
        if (!bytes) return undefined;
        const result =
          bytes instanceof Uint8Array ? await decode(bytes, check) : { ok: false as const, reason: bytes.tooLarge };
        if (result.ok) return result.value;
        if (opts?.quarantine === false) return undefined;
        const seen = bytes instanceof Uint8Array ? bytes : undefined;
        if ((await quarantine(key, seen, result.reason, check)) !== "retry") return undefined;
      }
      return undefined;
    },
    write: (key, record, check, opts) => writeText(key, JSON.stringify(record), check, opts),
    writeText,
    async remove(key: string) {
      // Directly, not through storage.removeItem, to learn whether the file was still there.
      try {
        await unlink(keyToPath(dir, key));
        return true;
      } catch (e) {
        if (code(e) === "ENOENT") return false;
        throw e;
      }
    },
  };
}
