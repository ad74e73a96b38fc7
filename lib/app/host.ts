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
import { stat } from "../fsio.ts";
import type { Logger } from "../log.ts";
import type { LoadResult } from "./config.ts";
import type { MonitorListener } from "../monitor/listen.ts";
import { HostMonitor } from "./host-monitor.ts";
import { listenRoutes } from "./run-listener.ts";
import type { RunOutcome } from "./run-types.ts";
import { type Host, type HostOptions, Slot, clashing, problemOf } from "./host-slot.ts";

export { RESTART_FIRST_MS, RESTART_MAX_MS, RESTART_RESET_MS, type HostOptions } from "./host-slot.ts";

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
  [...slots].flatMap(([other, slot]) => {
    const held = other === name ? undefined : slot.holds;
    return held ? [[other, held] as const] : [];
  });
