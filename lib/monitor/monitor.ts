/**
 * The running agent's side of `hub-agent status` (docs/monitoring.md): it keeps the run's snapshot in the store
 * (lib/monitor/status.ts) — written when something changed, checked every CHECK_MS, and at least every
 * HEARTBEAT_MS so a reader can tell a stuck process from a quiet one — and builds the status page's view from the
 * same snapshot. The numbers come from the metrics registry (lib/monitor/metrics.ts); the rest is read live here.
 */
import { hostname } from "node:os";
import type { Clock } from "../clock.ts";
import type { BridgeHealth, GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import { cacheWrite, type Store } from "../store/index.ts";
import type { Metrics } from "./metrics.ts";
import { QueueCounts } from "./queue-counts.ts";
import { ownStatus, runStatusCache, type RunSnapshot, type StatusView } from "./status.ts";

export const CHECK_MS = 2_000;
export const HEARTBEAT_MS = 30_000;

export interface MonitorOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  mode: RunSnapshot["mode"];
  /** Started without the instance lock. */
  unlocked: boolean;
  /** `game.bridge` and its health. */
  bridge: { kind: string; health?: () => BridgeHealth };
  players: () => Iterable<GamePlayer>;
  /** When the run started, if before this monitor (a reload serves a new agent, and a new monitor, in the same run). */
  startedAt?: number;
}

const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

export class RunMonitor {
  readonly startedAt: number;
  private state: RunSnapshot["state"] = "starting";
  private readyAt?: number;
  private serverRecord: RunSnapshot["server_record"] = null;
  private http: RunSnapshot["http"] = null;
  private abort = new AbortController();
  private loop?: Promise<void>;
  private written = "";
  private writtenAt = -Infinity;
  private failed?: string;
  /** The queue depths of the status page and /metrics, once something asked for them. */
  private counts?: QueueCounts;

  constructor(private o: MonitorOptions) {
    this.startedAt = o.startedAt ?? o.clock.now();
  }

  /** hub_ready: the run serves, from the live server record or the cached one. */
  ready(source: "api" | "cache"): void {
    this.state = "ready";
    this.readyAt = this.o.clock.now();
    this.serverRecord = source;
  }

  get isReady(): boolean {
    return this.state === "ready";
  }

  /** The status page's address, or why it could not listen. */
  listening(http: NonNullable<RunSnapshot["http"]>): void {
    this.http = http;
    // Count the queues now, not at the first request (which would wait for every entry to be read).
    if (http.url) this.queueDepths().catch(() => {}); // a failure here is the first request's to report
  }

  snapshot(): RunSnapshot {
    const { metrics, clock } = this.o;
    const s = metrics.service;
    const gate = metrics.gateMs();
    const health = this.o.bridge.health?.() ?? { state: "unknown" as const };
    return {
      pid: process.pid,
      host: hostname(),
      started_at: new Date(this.startedAt).toISOString(),
      mode: this.o.mode,
      state: this.state,
      ready_at: isoOrNull(this.readyAt),
      server_record: this.serverRecord,
      service: {
        reachable: s.reachable,
        key_accepted: s.keyAccepted,
        last_answer_at: isoOrNull(s.lastAnswerAt),
        last_error: s.lastError ? { at: new Date(s.lastError.at).toISOString(), message: s.lastError.message } : null,
        last_429_at: isoOrNull(s.last429At),
        rate_limited_until: gate > 0 ? new Date(clock.now() + gate).toISOString() : null,
      },
      requests: metrics
        .requests()
        .map((r) => ({ method: r.method, endpoint: r.route, outcome: r.outcome, count: r.count })),
      jobs: [...metrics.jobs.values()].map((j) => ({
        name: j.name,
        interval_s: j.intervalMs === undefined ? null : j.intervalMs / 1000,
        runs: j.runs,
        failures: j.failures,
        running: j.running > 0,
        last_run_at: isoOrNull(j.lastRunAt),
        last_success_at: isoOrNull(j.lastSuccessAt),
        last_error_at: isoOrNull(j.lastErrorAt),
        last_error: j.lastError ?? null,
      })),
      players: [...this.o.players()].map((p) => ({ id: p.id, name: p.name })),
      bridge: { kind: this.o.bridge.kind, state: health.state, reason: health.reason ?? null },
      http: this.http,
      unlocked: this.o.unlocked,
    };
  }

  /** What the status page and /metrics show: this snapshot and the store as it is now. */
  status(): Promise<StatusView> {
    const now = this.o.clock.now();
    return ownStatus(this.o.store, this.snapshot(), now, () => this.queueDepths(now));
  }

  private queueDepths(now = this.o.clock.now()) {
    this.counts ??= new QueueCounts(this.o.store, this.o.clock);
    return this.counts.depths(now);
  }

  /** Writes the snapshot now, then whenever it changes. */
  start(): void {
    const signal = this.abort.signal;
    this.loop = (async () => {
      while (!signal.aborted) {
        await this.write();
        try {
          await this.o.clock.sleep(CHECK_MS, signal);
        } catch {
          return; // stopped
        }
      }
    })();
  }

  /** A signal came: the run finishes its work in flight. */
  stopping(): void {
    this.state = "stopping";
  }

  /** Stops the writer and writes the final state. */
  async stop(): Promise<void> {
    this.counts?.close();
    this.abort.abort();
    await this.loop;
    this.state = "stopped";
    await this.write(true);
  }

  private async write(force = false): Promise<void> {
    const snapshot = this.snapshot();
    const text = JSON.stringify(snapshot);
    const now = this.o.clock.monotonic();
    if (!force && text === this.written && now - this.writtenAt < HEARTBEAT_MS) return;
    try {
      // A disk that refuses writes is reported by the store once; the run goes on without a fresh snapshot.
      await cacheWrite(runStatusCache(this.o.store).set(snapshot));
      this.written = text;
      this.writtenAt = now;
      this.failed = undefined;
    } catch (e) {
      const message = (e as Error).message;
      if (this.failed !== message) this.o.logger.warn(`the run's status could not be saved: ${message}`);
      this.failed = message;
    }
  }
}
