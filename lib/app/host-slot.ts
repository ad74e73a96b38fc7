/**
 * One server of a host (lib/app/host.ts): its agent, started again with a growing pause when it ends, until the host
 * stops it; what a SIGHUP does to it (reload, restart at once, or end a pause); the checks that keep two servers
 * from sharing what only one agent can hold.
 */
import { PassThrough } from "node:stream";
import { changedKeys } from "../config/changes.ts";
import type { ServerList } from "../config/servers.ts";
import type { Logger } from "../log.ts";
import type { Config, LoadResult } from "./config.ts";
import type { HostMonitor } from "./host-monitor.ts";
import { RunControl } from "./run-control.ts";
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
export type Host = HostOptions & { monitor: HostMonitor };

/** The bridges that connect to the game's network console (game.rcon): the others run or await the game. */
const REMOTE_CONSOLES = new Set(["rcon", "q3rcon", "webrcon", "econ", "dprcon"]);

/** The usual names of this machine's console: `localhost`, `127.0.0.1` and `::1` reach one game bound to all. */
const THIS_MACHINE = new Set(["localhost", "127.0.0.1", "::1"]);

/**
 * The game console a server's agent connects to, as "host:port" (the same unset port: the same preset's); `same`:
 * this machine's names as one, to compare.
 */
function consoleOf(c: Config, same = false): string | undefined {
  if (!REMOTE_CONSOLES.has(c.game.bridge)) return undefined;
  const written = c.game.rcon.host;
  const host = !same ? written : THIS_MACHINE.has(written.toLowerCase()) ? "localhost" : written.toLowerCase();
  return `${host}:${c.game.rcon.port ?? `<the ${c.game.preset ?? "default"} ${c.game.bridge} port>`}`;
}

/**
 * A server's configuration, refused when it would share what only one agent can hold with a server already loaded:
 * the store (its instance lock would stop the second at every start), the status page's address, its server at
 * VyHub (the service lists each `once` reward to that server: two agents would both run it), or its game's console
 * (two agents would kick, reward and count the same players, each for its own server at VyHub).
 */
export function clashing(name: string, r: LoadResult, others: (readonly [string, Config])[]): LoadResult {
  if (!r.ok) return r;
  for (const [other, c] of others) {
    const line =
      c.storage.dir === r.config.storage.dir
        ? `storage.dir ${r.config.storage.dir} is also ${other}'s: each server needs its own (leave storage.dir out of its file, and each gets <storage.dir>/servers/<name>)`
        : r.config.http.listen && !r.config.http.listen.endsWith(":0") && c.http.listen === r.config.http.listen
          ? `http.listen = "${c.http.listen}" is also ${other}'s: give each server its own address in its file`
          : c.api.url === r.config.api.url && c.api.server_id === r.config.api.server_id
            ? `api.server_id ${c.api.server_id} is also ${other}'s: VyHub would see the two as one server (a \`once\` reward would run on both, their status reports overwrite each other): give each server its own api.server_id in its file`
            : consoleOf(r.config) !== undefined && consoleOf(c, true) === consoleOf(r.config, true)
              ? `game.rcon ${consoleOf(r.config)} is also ${other}'s${consoleOf(c) === consoleOf(r.config) ? "" : ` (${consoleOf(c)})`}: two agents would act on one game's players, each for its own server at VyHub: give each server its own game.rcon.port (or host) in its file`
              : undefined;
    if (line)
      return { ok: false, problems: [`${name}: ${line}`], ...(r.file ? { file: r.file } : {}), secrets: r.secrets };
  }
  return r;
}

export const problemOf = (r: Extract<LoadResult, { ok: false }>) => {
  const count = r.problems.filter((p) => !p.startsWith("| ")).length;
  return `${r.problems[0]}${count > 1 ? ` (and ${count - 1} more: see hub-agent doctor --server)` : ""}`;
};

/** What an agent's end was, in words. */
function ended(o: RunOutcome): string {
  return "line" in o ? o.line : o.kind;
}

/** One server: its agent, started again when it ends until the host stops it. */
export class Slot {
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
  /**
   * What the others are checked against (clashing): its running configuration, or the one it started with while it
   * pauses before starting again; a server added meanwhile does not take what it holds.
   */
  get holds(): Config | undefined {
    return this.running ?? (this.backingOff ? this.lastStarted : undefined);
  }
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
      // Checked against the others again here, with nothing awaited before `running` is set: two servers loaded at
      // one SIGHUP could otherwise both pass the check in load() before either runs.
      const result = clashing(this.name, config ?? (await this.load()), this.others());
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
