/**
 * What `hub-agent status`, the status page's /status.json and /metrics show (docs/monitoring.md): the snapshot a
 * `run` keeps in its store (its pid, state, the service as it sees it, its jobs, players and game bridge; written by
 * lib/monitor/monitor.ts), and what the store itself holds: the queues, the caches' ages and the quarantined files.
 * Whether the run is alive comes from the instance lock (lib/store/instance.ts), never from the snapshot's age.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import type { Store } from "../store/index.ts";
import { instanceHolder, type InstanceHolder } from "../store/instance.ts";
import { queueStatus } from "../queues.ts";
import { type Drain, DRAIN_CACHE, drainCache } from "../sanctions/drain.ts";

/** The cache the snapshot is kept in (`<storage.dir>/cache/run_status`). */
export const RUN_STATUS_CACHE = "run_status";

const iso = v.nullable(v.string());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const RunSnapshotSchema = v.object({
  pid: count,
  host: v.string(),
  started_at: v.string(),
  /** `run` or `run --once`. */
  mode: v.picklist(["run", "once"]),
  /** starting: waiting for the server record; ready: after hub_ready; stopped: it ended cleanly. */
  state: v.picklist(["starting", "ready", "stopping", "stopped"]),
  ready_at: iso,
  /** Where the server record in use came from at hub_ready. */
  server_record: v.nullable(v.picklist(["api", "cache"])),
  service: v.object({
    reachable: v.nullable(v.boolean()),
    key_accepted: v.nullable(v.boolean()),
    last_answer_at: iso,
    last_error: v.nullable(v.object({ at: v.string(), message: v.string() })),
    last_429_at: iso,
    /** While the 429 gate is closed: when it opens; null when open. */
    rate_limited_until: iso,
  }),
  requests: v.array(v.object({ method: v.string(), endpoint: v.string(), outcome: v.string(), count })),
  jobs: v.array(
    v.object({
      name: v.string(),
      interval_s: v.nullable(v.number()),
      runs: count,
      failures: count,
      running: v.boolean(),
      last_run_at: iso,
      last_success_at: iso,
      last_error_at: iso,
      last_error: v.nullable(v.string()),
    }),
  ),
  players: v.array(v.object({ id: v.string(), name: v.string() })),
  bridge: v.object({
    kind: v.string(),
    state: v.picklist(["unknown", "up", "down"]),
    reason: v.nullable(v.string()),
  }),
  /** The status page and /metrics, when `[http] listen` is set: its address, or why it could not listen. */
  http: v.nullable(v.object({ url: v.nullable(v.string()), error: v.nullable(v.string()) })),
  /** Started without the instance lock (the store refused writes): rewards and playtime are off. */
  unlocked: v.boolean(),
});
export type RunSnapshot = v.InferOutput<typeof RunSnapshotSchema>;

/** Not flushed: it describes a `run` that a power cut stops with it (docs/reliability.md, "Why each fsync"). */
export const runStatusCache = (store: Store) => store.cache(RUN_STATUS_CACHE, RunSnapshotSchema, { durable: false });

export interface QueueDepth {
  queue: string;
  entries: number;
  /** Entries `run` still sends; the others wait for the operator. */
  waiting: number;
  uncertain: number;
  oldest_age_s: number | null;
}

/** What the store holds, read live (not from the snapshot). */
export interface StoreFacts {
  storage_dir: string;
  queues: QueueDepth[];
  caches: { name: string; age_s: number | null }[];
  quarantine: { dir: string; count: number; newest: { key: string; file: string; at: string }[] };
  /** The last delivery round of `run` that was logged as it went (lib/sanctions/drain.ts): running or done. */
  sanctions_drain?: Drain | null;
}

export interface StatusView extends StoreFacts {
  now: string;
  /**
   * alive: the instance lock's holder runs (on this host); foreign: a run on another host holds it (not checkable
   * from here); gone: the holder died without releasing it; none: no run holds it.
   */
  run: {
    alive: boolean;
    lock: "live" | "foreign" | "gone" | "unreadable" | "none";
    holder: { pid: number; host: string; since: string } | null;
  };
  /** The run's snapshot, with its age; null when none was ever written (or it is another run's than the holder's). */
  snapshot: (RunSnapshot & { written_at: string; age_s: number }) | null;
}

/** Files listed by name in the view; the count is of all of them. */
const NEWEST_QUARANTINED = 10;

/** Players named by `hub-agent status` and the status page; the count is of all of them (status.json has each one). */
export const PLAYERS_NAMED = 50;

/** `3 online: Alice, Bob, Carol`; past PLAYERS_NAMED, `… and 4,950 more` (thousands online: one line, not 60 KB). */
export function playersOnline(players: readonly { name: string }[]): string {
  const names = players
    .slice(0, PLAYERS_NAMED)
    .map((p) => p.name)
    .join(", ");
  const more = players.length - PLAYERS_NAMED;
  return `${players.length} online${names ? `: ${names}` : ""}${more > 0 ? ` … and ${more.toLocaleString("en-US")} more` : ""}`;
}

const ageS = (at: number, now: number) => (at <= now ? Math.round((now - at) / 1000) : null);

/** Every queue's depth, read from the store (every entry of every queue). */
async function readDepths(store: Store, now: number): Promise<QueueDepth[]> {
  return (await queueStatus(store, now)).map((q) => ({
    queue: q.queue,
    entries: q.entries,
    waiting: q.waiting,
    uncertain: q.items.filter((i) => i.uncertain).length,
    oldest_age_s: q.oldest_age_s,
  }));
}

/** What the store holds; the queue depths from `depths` (the running agent's counts, lib/monitor/queue-counts.ts). */
export async function storeFacts(
  store: Store,
  now: number,
  depths = () => readDepths(store, now),
): Promise<StoreFacts> {
  const [queues, caches, drain] = await Promise.all([
    depths(),
    store.caches(),
    drainCache(store)
      .get()
      .catch(() => undefined),
  ]);
  const corrupt = await store.corrupt(); // after the queues were read: what reading them moved aside counts too
  return {
    storage_dir: store.dir,
    queues,
    caches: caches
      .filter((c) => c.name !== RUN_STATUS_CACHE && c.name !== DRAIN_CACHE)
      .map((c) => ({ name: c.name, age_s: ageS(c.writtenAt, now) })),
    quarantine: {
      dir: join(store.dir, "corrupt"),
      count: corrupt.length,
      newest: corrupt
        .slice(0, NEWEST_QUARANTINED)
        .map((c) => ({ key: c.key, file: c.file, at: new Date(c.at).toISOString() })),
    },
    sanctions_drain: drain?.data ?? null,
  };
}

/** `hub-agent status` from another shell: the instance lock says whether a run is alive, the store says the rest. */
export async function readStatus(store: Store, now: number): Promise<StatusView> {
  let lock: Awaited<ReturnType<typeof instanceHolder>>;
  try {
    lock = await instanceHolder(store.dir);
  } catch {
    lock = { verdict: "unreadable" }; // a directory in its place, no permission: no holder to name
  }
  const holder = "holder" in lock ? lock.holder : undefined;
  const [facts, cached] = await Promise.all([storeFacts(store, now), runStatusCache(store).get()]);
  // The snapshot of an earlier run must not be shown as the live one's.
  const current = cached && (!holder || lock.verdict !== "live" || cached.data.pid === holder.pid) ? cached : undefined;
  return {
    now: new Date(now).toISOString(),
    run: { alive: lock.verdict === "live", lock: lock.verdict, holder: holder ? holderView(holder) : null },
    snapshot: current ? withAge(current.data, current.savedAt, now) : null,
    ...facts,
  };
}

/**
 * The status page's view, inside the run itself: alive by definition, its snapshot fresh from memory, its queue
 * depths from `depths` (kept by the run as the queues change).
 */
export async function ownStatus(
  store: Store,
  snapshot: RunSnapshot,
  now: number,
  depths?: () => Promise<QueueDepth[]>,
): Promise<StatusView> {
  return {
    now: new Date(now).toISOString(),
    run: {
      alive: true,
      lock: snapshot.unlocked ? "none" : "live",
      holder: { pid: snapshot.pid, host: snapshot.host || hostname(), since: snapshot.started_at },
    },
    snapshot: withAge(snapshot, now, now),
    ...(await storeFacts(store, now, depths)),
  };
}

function holderView(h: InstanceHolder) {
  return { pid: h.pid, host: h.host, since: new Date(h.since).toISOString() };
}

function withAge(s: RunSnapshot, savedAt: number, now: number) {
  return { ...s, written_at: new Date(savedAt).toISOString(), age_s: ageS(savedAt, now) ?? 0 };
}
