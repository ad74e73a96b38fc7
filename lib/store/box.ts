/**
 * A box of small notes between processes (`box/<name>/<id>`): what a one-shot command asks a running `run` and what
 * `run` answers (lib/sanctions/handoff.ts). Notes are advisory: written atomically but not fsynced, since a note lost
 * to a power cut only delays what it asked for (the queue entry it names is durable). Each is validated on read.
 */
import { readdir, stat } from "../fsio.ts";
import { join } from "node:path";
import * as v from "valibot";
import { isMissing, TMP_MARK } from "./driver.ts";
import { type Records, schemaCheck } from "./records.ts";

export interface Box<T> {
  /** The folder, for watching it. */
  dir: string;
  put(id: string, value: T): Promise<void>;
  get(id: string): Promise<T | undefined>;
  /** false when it was already gone. */
  remove(id: string): Promise<boolean>;
  /** The notes' ids with their age by the file's time, oldest first; [] when the box is empty or missing. */
  list(): Promise<{ id: string; mtimeMs: number }[]>;
  /** The notes' ids in name order, without their ages (one listing of the folder, no file looked at). */
  ids(): Promise<string[]>;
}

/** A note's id: a queue entry id or another plain name. */
export const NOTE_ID = /^[A-Za-z0-9_-]{1,80}$/;

export function createBox<T>(name: string, schema: v.GenericSchema<T>, records: Records, base: string): Box<T> {
  const dir = join(base, "box", name);
  const check = schemaCheck(v.object({ v: v.literal(1), note: schema }));
  const key = (id: string) => {
    if (!NOTE_ID.test(id)) throw new Error(`store: invalid note id ${JSON.stringify(id)}`);
    return `box:${name}:${id}`;
  };
  const ids = async () => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (isMissing(e)) return [];
      throw e;
    }
    return names.filter((n) => NOTE_ID.test(n) && !n.includes(TMP_MARK)).sort();
  };
  return {
    dir,
    put: (id, note) => records.write(key(id), { v: 1, note }, check, { fsync: false }),
    async get(id) {
      return (await records.read(key(id), check))?.note as T | undefined;
    },
    remove: (id) => records.remove(key(id)),
    ids,
    async list() {
      const notes = await Promise.all(
        (await ids()).map(async (id) => ({ id, mtimeMs: (await stat(join(dir, id)).catch(() => undefined))?.mtimeMs })),
      );
      return notes
        .filter((n): n is { id: string; mtimeMs: number } => n.mtimeMs !== undefined)
        .sort((a, b) => a.mtimeMs - b.mtimeMs);
    },
  };
}
