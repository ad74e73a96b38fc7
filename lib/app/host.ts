/**
 * Every server of a host in one `run` (servers.d, lib/config/servers.ts): each server is its own agent, as `run` of
 * its configuration alone would be (its game bridge, store and instance lock, service client, jobs and status page),
 * started together and stopped together. One server's failure is its own: when its agent ends (a wrapped server that
 * exits, a store it cannot use, a failure), it starts again after a pause that doubles from 1 s up to 5 min (back to
 * 1 s after 10 min of running), and the other servers run on. A server whose file is not valid waits for a SIGHUP.
 *
 * SIGHUP reads servers.d again: a new file starts its server, a removed one stops it, every other server reads its
 * own configuration again (an unchanged one goes on untouched: lib/app/run-reload.ts), and one whose change only a
 * start applies (its game, its store) has its agent started again at once. The shared settings' http.listen is the
 * host's one status page and /metrics for every server (lib/app/host-monitor.ts), taken at the start.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { ServerList } from "../config/servers.ts";
import { stat } from "../fsio.ts";
import type { Logger } from "../log.ts";
import type { Config, LoadResult } from "./config.ts";
import type { MonitorListener } from "../monitor/listen.ts";
import { HostMonitor } from "./host-monitor.ts";
import { RunControl } from "./run-control.ts";
import { listenRoutes } from "./run-listener.ts";
import { changedKeys } from "../config/changes.ts";
import { restartOnlyChanges } from "./run-reload.ts";
import { startRun } from "./run.ts";
import type { RunOutcome } from "./run-types.ts";

/** The first pause before a failed server starts again, the longest, and the run that resets it. */
export const RESTART_FIRST_MS = 1_000;
export const RESTART_MAX_MS = 5 * 60_000;
export const RESTART_RESET_MS = 10 * 60_000;

export interface HostOptions {
  /** servers.d as it is now. */
  list: () => Promise<ServerList>;
  /** One server's configuration, read again at each (re)start and SIGHUP. */
  load: (name: string) => Promise<LoadResult>;
  logger: Logger;
  /** The process's stop and reload requests. */
  control: RunControl;
  copyConsole: boolean;
  redact: (text: string) => string;
  /** The store of the shared settings alone: what a single run left there no server sends (leftInShared). */
  sharedStore?: () => Promise<string | undefined>;
}

/** What every server's slot shares. */
type Host = HostOptions & { monitor: HostMonitor };

/**
 * The host's listener: http.listen as the shared file or the environment set it (a server's own file setting it
 * gives that server a page of its own, as a single run has). Taken out of every server's configuration.
 */
function hostListen(loaded: LoadResult[]): string | undefined {
  let listen: string | undefined;
  for (const r of loaded)
    if (r.ok && r.config.http.listen && !r.own?.includes("http.listen")) {
      listen = r.config.http.listen;
      r.config.http.listen = undefined;
    }
  return listen;
}

/** Runs every server until the host is stopped; "config" when no server's configuration is valid at the start. */
export async function runHost(o: HostOptions): Promise<RunOutcome> {
  const slots = new Map<string, Slot>();
  const { names, ignored } = await o.list();
  for (const line of ignored) o.logger.warn(line);
  const loaded = await Promise.all(
    names.map((n) =>
      o.load(n).catch((e: unknown): LoadResult => ({ ok: false, problems: [`${n}: ${String(e)}`], secrets: [] })),
    ),
  );
  // The shared settings' http.listen is the host's page, for every server; a server's own file may set its own.
  const listen = hostListen(loaded);
  const first = new Map<string, LoadResult>();
  names.forEach((n, i) => first.set(n, clashing(n, loaded[i] as LoadResult, loadedConfigs(first))));
  const problems = [...first].flatMap(([n, r]) => (r.ok ? [] : [`${n}: ${problemOf(r)}`]));
  if (problems.length === names.length) return { kind: "config", line: problems.join("; ") };
  o.logger.info(`hosting ${names.length} server${names.length === 1 ? "" : "s"}: ${names.join(", ")}`);
  const monitor = new HostMonitor(() => [...slots.keys()]);
  const page: Page = { listen, listener: listen ? await listenRoutes(listen, monitor.routes(), o.logger) : undefined };
  const host = { ...o, monitor };
  for (const name of names) slots.set(name, new Slot(name, host, othersOf(slots, name), first.get(name)));
  const stores = loadedConfigs(first).map(([, c]) => c.storage.dir);
  void leftInShared(o, stores);

  // Signal handlers keep no process alive: with no server's agent running (the last one's file removed, the others
  // waiting for a SIGHUP to mend theirs), the process would end with 0, deaf to that SIGHUP, and not restarted.
  const alive = setInterval(() => {}, 2 ** 30);
  let reloading = Promise.resolve();
  let finish!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => {
    const end = o.control.serve({
      stop: (why) => finish(why),
      hangup: () =>
        void (reloading = reloading.then(async () => {
          await reload(host, slots);
          await movePage(host, page, [...slots.keys()]);
        })),
    });
    finish = (why) => {
      end();
      resolve(why);
    };
  });
  // Every server held by one other run at its first start: another host runs these servers (a second `run` of the
  // same configuration), and this one ends as a second single run does (exit 7), rather than waiting to take over.
  // A server held alone (its own `run --server`, the template unit's instance) is tried again, the others run on.
  let outcome: RunOutcome = { kind: "stopped" };
  void heldByAnother([...slots.values()]).then((held) => {
    if (!held) return;
    outcome = held;
    finish("another run holds every server");
  });
  const why = await stopped;
  await reloading;
  await Promise.all([...slots.values()].map((s) => s.stop(why)));
  await page.listener?.stop();
  clearInterval(alive);
  return outcome;
}

/** The first held outcome when every server valid at the start (two or more) found its store held by one run. */
async function heldByAnother(slots: Slot[]): Promise<RunOutcome | undefined> {
  const firsts = await Promise.all(slots.flatMap((s) => (s.first ? [s.first] : [])));
  const holders = new Set(firsts.map((f) => (f !== "started" && f.kind === "instance-held" ? f.holder : undefined)));
  const [holder] = holders;
  return firsts.length >= 2 && holders.size === 1 && holder !== undefined ? (firsts[0] as RunOutcome) : undefined;
}

/** The host's status page: the shared http.listen, and its listener (none when unset or not bound). */
interface Page {
  listen: string | undefined;
  listener: MonitorListener | undefined;
}

/**
 * SIGHUP: the shared http.listen read again, from the first server whose file leaves it to the shared settings (none:
 * not known, the page stays); changed, the host's page moves there, as a single run's does.
 */
async function movePage(o: Host, page: Page, names: string[]): Promise<void> {
  let next: string | undefined | null = null;
  for (const name of names) {
    const r = await o.load(name).catch(() => undefined);
    if (r?.ok && !r.own?.includes("http.listen")) {
      next = r.config.http.listen;
      break;
    }
  }
  if (next === null || next === page.listen) return;
  o.logger.info(
    `SIGHUP: http.listen changed: ${next ? `the host's status page moves to ${next}` : "the host's status page is closed"}`,
  );
  await page.listener?.stop();
  page.listen = next;
  page.listener = next ? await listenRoutes(next, o.monitor.routes(), o.logger) : undefined;
}

/** SIGHUP: servers added start, removed ones stop, the others read their configuration again. */
async function reload(o: Host, slots: Map<string, Slot>): Promise<void> {
  const { dir, names, ignored } = await o.list().catch((e: unknown) => {
    o.logger.warn(`SIGHUP: servers.d cannot be read (${(e as Error).message}); every server goes on as it is`);
    return { dir: "servers.d", names: [...slots.keys()], ignored: [] };
  });
  for (const line of ignored) o.logger.warn(line);
  const gone = [...slots.keys()].filter((n) => !names.includes(n));
  await Promise.all(
    gone.map(async (name) => {
      o.logger.info(`SIGHUP: ${name} is no longer in servers.d: stopping it`);
      const slot = slots.get(name);
      await slot?.stop("its file was removed");
      slots.delete(name);
      o.monitor.forget(name);
      if (slot?.store) await leftBehind(o.logger, name, slot.store, join(dir, `${name}.toml`));
    }),
  );
  for (const name of names) {
    const slot = slots.get(name);
    if (slot) slot.hangup();
    else {
      o.logger.info(`SIGHUP: ${name} is new in servers.d: starting it`);
      slots.set(name, new Slot(name, o, othersOf(slots, name)));
    }
  }
}

/**
 * A removed server's store still holding what only its agent sends (a ban queued while the service was down, a
 * reward's report): one warning, since no other server's agent reads that store.
 */
async function leftBehind(logger: Logger, name: string, dir: string, file: string): Promise<void> {
  try {
    const waiting = await waitingIn(dir);
    if (waiting)
      logger.warn(
        `SIGHUP: ${name}'s store ${dir} still holds what its agent had not sent (${waiting}): no other server sends it; put ${file} back until \`hub-agent queue status --server ${name}\` shows it sent`,
      );
  } catch (e) {
    logger.warn(`SIGHUP: ${name}'s store ${dir} could not be read for what its agent had not sent: ${String(e)}`);
  }
}

/**
 * The store of the shared settings alone, where the run of one server kept its queues before servers.d, holding what
 * that run had not sent (a ban queued while the service was down, a `once` reward's report): no server of servers.d
 * reads it (each has its own, `servers/<name>` under it), so it is said once at the start.
 */
async function leftInShared(o: HostOptions, stores: string[]): Promise<void> {
  const dir = await o.sharedStore?.().catch(() => undefined);
  const queues =
    dir &&
    (await stat(join(dir, "queue")).then(
      () => true,
      () => false,
    ));
  if (!dir || !queues || stores.includes(dir)) return; // none, or a server's own
  try {
    const waiting = await waitingIn(dir);
    if (waiting)
      o.logger.warn(
        `the store ${dir} holds what the run of the shared file alone had not sent (${waiting}): no server of servers.d sends it; to send it, stop this run, move servers.d aside, run \`hub-agent run --once\` until \`hub-agent queue status\` shows it sent, then put servers.d back`,
      );
  } catch (e) {
    o.logger.warn(`the store ${dir} could not be read for what the run of the shared file alone left: ${String(e)}`);
  }
}

/** What a store's queues hold to send, as "ban: 1, unban: 2"; undefined when nothing. */
async function waitingIn(dir: string): Promise<string | undefined> {
  const [{ openStore }, { queueStatus }] = await Promise.all([import("../store/index.ts"), import("../queues.ts")]);
  const store = await openStore({ dir, sweep: false });
  const waiting = (await queueStatus(store, Date.now())).filter((q) => q.waiting > 0);
  return waiting.length ? waiting.map((q) => `${q.queue}: ${q.waiting}`).join(", ") : undefined;
}

const loadedConfigs = (loaded: Map<string, LoadResult>) =>
  [...loaded].flatMap(([name, r]) => (r.ok ? [[name, r.config] as const] : []));

/** What the other servers' agents hold while they run. */
const othersOf = (slots: Map<string, Slot>, name: string) => () =>
  [...slots].flatMap(([other, slot]) => (other !== name && slot.running ? [[other, slot.running] as const] : []));

/**
 * A server's configuration, refused when it would share what only one agent can hold with a server already loaded:
 * the store (its instance lock would stop the second at every start), the status page's address, or its server at
 * VyHub (the service lists each `once` reward to that server: two agents would both run it).
 */
function clashing(name: string, r: LoadResult, others: (readonly [string, Config])[]): LoadResult {
  if (!r.ok) return r;
  for (const [other, c] of others) {
    const line =
      c.storage.dir === r.config.storage.dir
        ? `storage.dir ${r.config.storage.dir} is also ${other}'s: each server needs its own (leave storage.dir out of its file, and each gets <storage.dir>/servers/<name>)`
        : r.config.http.listen && !r.config.http.listen.endsWith(":0") && c.http.listen === r.config.http.listen
          ? `http.listen = "${c.http.listen}" is also ${other}'s: give each server its own address in its file`
          : c.api.url === r.config.api.url && c.api.server_id === r.config.api.server_id
            ? `api.server_id ${c.api.server_id} is also ${other}'s: VyHub would see the two as one server (a \`once\` reward would run on both, their status reports overwrite each other): give each server its own api.server_id in its file`
            : undefined;
    if (line)
      return { ok: false, problems: [`${name}: ${line}`], ...(r.file ? { file: r.file } : {}), secrets: r.secrets };
  }
  return r;
}

const problemOf = (r: Extract<LoadResult, { ok: false }>) => {
  const count = r.problems.filter((p) => !p.startsWith("| ")).length;
  return `${r.problems[0]}${count > 1 ? ` (and ${count - 1} more: see hub-agent doctor --server)` : ""}`;
};

/** What an agent's end was, in words. */
function ended(o: RunOutcome): string {
  return "line" in o ? o.line : o.kind;
}

/** One server: its agent, started again when it ends until the host stops it. */
class Slot {
  /** Its agent's stop and reload requests: a new one for each start (a control is stopped once). */
  private control = new RunControl();
  /** A SIGHUP changed what only a start applies: the agent was stopped to start again with this. */
  private restartWith: LoadResult | undefined;
  private readonly log: Logger;
  private stopping: string | undefined;
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;
  /** The configuration its agent started with, while it runs. */
  running: Config | undefined;
  /** The configuration its agent last started with (a pause after a failure ends early when its file changed). */
  private lastStarted: Config | undefined;
  /** Sleeping out a pause after a failure (not waiting for a mended file). */
  private backingOff = false;
  /** The store of its last agent: what it leaves there is said when its file is removed (leftBehind). */
  store: string | undefined;
  /** A server valid at the host's start: how its first agent went, started or ended (heldByAnother). */
  readonly first: Promise<RunOutcome | "started"> | undefined;
  private firstDone: (how: RunOutcome | "started") => void = () => {};

  constructor(
    private readonly name: string,
    private readonly host: Host,
    private readonly others: () => (readonly [string, Config])[],
    loaded?: LoadResult,
  ) {
    this.log = host.logger.withTag(name);
    if (loaded?.ok) this.first = new Promise((resolve) => (this.firstDone = resolve));
    this.done = this.loop(loaded).catch((e: unknown) => this.log.error(`stopped by an error: ${String(e)}`));
  }

  private async loop(loaded?: LoadResult): Promise<void> {
    let pause = RESTART_FIRST_MS;
    for (let config = loaded; !this.stopping; config = undefined) {
      const result = config ?? (await this.load());
      if (this.stopping) return;
      if (!result.ok) {
        const why = `${result.file ?? this.name} is not valid, so it is not running: ${problemOf(result)}`;
        this.log.error(why);
        this.host.monitor.set(this.name, undefined, why);
        await this.sleep(); // until a SIGHUP (a file does not mend itself) or the stop
        continue;
      }
      const started = performance.now();
      this.running = result.config;
      this.lastStarted = result.config;
      this.store = result.config.storage.dir;
      this.control = new RunControl();
      const outcome = await startRun({
        config: result.config,
        logger: this.log,
        control: this.control,
        reread: () => this.load(),
        onMonitor: (m) => {
          this.host.monitor.set(this.name, m);
          this.firstDone("started");
        },
        copyConsole: this.host.copyConsole,
        redact: this.host.redact,
        // A line typed at the host's console has no one server to go to: a wrapped server reads none (an open,
        // silent stream, not an ended one). `run --server <name>` in a terminal types to that server.
        input: new PassThrough(),
      }).catch((e: unknown): RunOutcome => ({ kind: "failed", line: String(e) }));
      this.firstDone(outcome);
      this.running = undefined;
      if (this.stopping) return;
      if (this.restartWith) {
        [config, this.restartWith] = [this.restartWith, undefined];
        continue;
      }
      if (performance.now() - started >= RESTART_RESET_MS) pause = RESTART_FIRST_MS;
      const again = `its agent ended (${ended(outcome)}); starting it again in ${Math.round(pause / 1000)} s`;
      this.log.error(again);
      this.host.monitor.set(this.name, undefined, again);
      await this.sleep(pause);
      pause = Math.min(pause * 2, RESTART_MAX_MS);
    }
  }

  /** Its configuration, read again and checked against the other servers'; a failure to read it is a problem. */
  private async load(): Promise<LoadResult> {
    const r = await this.host
      .load(this.name)
      .catch((e: unknown): LoadResult => ({ ok: false, problems: [`${this.name}: ${String(e)}`], secrets: [] }));
    return clashing(this.name, this.ownListen(r), this.others());
  }

  /**
   * SIGHUP while its agent runs: what only a start applies (its game bridge, its store) starts this server's agent
   * again with the new file, at once; anything else the agent reads and applies itself (lib/app/run-reload.ts).
   */
  private async reload(): Promise<void> {
    const running = this.running;
    const next = running && (await this.load());
    const changed = next?.ok ? restartOnlyChanges(running as Config, next.config) : [];
    if (!next?.ok || !changed.length || this.running !== running) return this.control.hangup();
    this.log.info(`SIGHUP: ${changed.join(", ")} changed: starting this server's agent again with them`);
    this.restartWith = next;
    this.control.stop("its configuration changed");
  }

  /** Its configuration without the host's http.listen (the host serves it: hostListen). */
  private ownListen(r: LoadResult): LoadResult {
    if (r.ok && !r.own?.includes("http.listen")) r.config.http.listen = undefined;
    return r;
  }

  /** Until `ms` passed (none: for ever), a SIGHUP, or the stop. */
  private sleep(ms?: number): Promise<void> {
    this.backingOff = ms !== undefined;
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => this.woken(), ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.backingOff = false;
        resolve();
      };
    });
  }

  private woken(): void {
    this.wake?.();
  }

  hangup(): void {
    const retry = async () => {
      // Waiting for its file to be mended: try it now. In a pause after a failure: only when its file changed (a
      // tool that reloads every minute must not undo the pause of a server that keeps failing).
      const next = this.backingOff ? await this.load() : undefined;
      if (!next || !next.ok || !this.lastStarted || changedKeys(this.lastStarted, next.config).length) this.woken();
    };
    const done = this.wake ? retry() : this.reload();
    void done.catch((e: unknown) => this.log.error(`SIGHUP: ${String(e)}`));
  }

  async stop(why: string): Promise<void> {
    this.firstDone("started"); // not held: stopped first
    this.stopping ??= why;
    this.control.stop(why);
    this.woken();
    await this.done;
  }
}
