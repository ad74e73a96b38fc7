/**
 * A one-shot command beside a running `run` (lib/sanctions/handoff.ts): `run` holds the instance lock and watches the
 * handoff box, so a command's ban (lib/app/sanction.ts deliverEntry(), on a second store over the same directory, as another
 * process has it) is handed over instead of waiting for `run`'s delivery round: delivered at once even in the middle
 * of a backlog, the player kicked from the queue before any refresh of the ban list, and a bounded wait when `run`
 * cannot answer in time (the entry stays queued). Sanctions issued at `run`'s own console are enforced the same way.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, unlinkSync, watch } from "node:fs";
import { deliverEntry } from "../../lib/app/sanction.ts";
import { openSession } from "../../lib/app/session.ts";
import { bans } from "../../lib/features/bans.ts";
import { DELIVERY_LOCK, type PlayerRef, queueBan, sanctionQueues } from "../../lib/sanctions/index.ts";
import { handoffBox, outcomeBox } from "../../lib/sanctions/handoff.ts";
import { KICK_SOCKET } from "../../lib/sanctions/kick-line.ts";
import { type Socket, createServer } from "node:net";

import { harness, until, type Harness } from "./harness.ts";
import { until as pollUntil } from "../support/until.ts";

const DAVE = { id: "76561198000000004", name: "Dave" };
const EVE = { id: "76561198000000005", name: "Eve" };
const env = { HUB_INTERVALS_BANS: "3600", HUB_INTERVALS_QUEUES: "60", HUB_API_TIMEOUT: "1" };

let h: Harness;
afterEach(() => h?.close());

const ref = (p: { id: string; name: string }): PlayerRef => ({
  identifier: p.id,
  type: "STEAM",
  user_id: null,
  name: p.name,
});
const kicks = (p: { id: string }) => h.sim.actionsOf("kick").filter((k) => k.player === p.id);
const logged = (text: string) => h.logger.lines.findIndex((l) => l.msg.includes(text));

/** What `hub-agent ban` does in its own process: its own session (store and client) on the same directory. */
async function cliBan(p: { id: string; name: string }) {
  const s = openSession({ config: async () => h.config, logger: h.logger, watched: [] });
  const entry = await queueBan(await s.store(), {
    target: ref(p),
    length: 600,
    reason: "griefing",
    creator: null,
    serverbundleId: h.sb.bundleId,
  });
  await Promise.all([s.store(), s.messages()]); // opened before the clock starts, as the command has them
  const started = performance.now();
  const d = await deliverEntry(s, "ban", entry.id);
  if (d.status === "credentials") throw new Error(d.message);
  return { fate: d.fate, entry, ms: performance.now() - started };
}

describe("a command beside a running run", () => {
  test("during a backlog's round: the command's ban is delivered at once, long before the round ends", async () => {
    h = await harness({ env, features: [bans] });
    // 200 bans queued during an outage; the service answers each request after 10 ms: the round takes seconds.
    const backlog = sanctionQueues(h.store).ban;
    for (let i = 0; i < 200; i++)
      await queueBan(h.store, {
        target: ref({ id: String(76561198300000000n + BigInt(i)), name: "" }),
        length: 600,
        reason: `backlog ${i}`,
        creator: null,
        serverbundleId: h.sb.bundleId,
      });
    h.sb.control.latency(10);
    await h.startRun();
    await until(() => h.sb.state.bans.size > 20, "the round to be under way", 30_000);
    const { fate, ms } = await cliBan(DAVE);
    const left = await backlog.size();
    expect(fate.result).toBe("delivered");
    expect(left).toBeGreaterThan(50); // the round still has most of the backlog before it
    console.log(`handed-over ban during a round: answered in ${ms.toFixed(0)} ms with ${left} entries left`);
    await until(() => h.sb.state.bans.size >= 201, "the backlog", 60_000);
  }, 90_000);

  test("with the service down: the player is kicked from the queue before the ban list is asked for", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    await h.join(DAVE);
    await h.sb.control.down();
    const { fate } = await cliBan(DAVE);
    expect(fate.result).toBe("kept");
    await until(() => kicks(DAVE).length === 1, "the kick");
    expect(kicks(DAVE)[0]!.text).toContain("Ban ID: pending");
    const kicked = logged("kicking a banned player");
    const refresh = h.logger.lines.findIndex((l, i) => i > 0 && l.msg.startsWith("ban list not refreshed"));
    expect(refresh === -1 || kicked < refresh).toBe(true);
  });

  test("a ban at run's own console with the service down: kick first, then the refresh", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    await h.join(DAVE);
    await h.sb.control.down();
    const before = h.logger.lines.length;
    await h.consoleLine(`ban ${DAVE.id} 1h griefing`);
    await until(() => kicks(DAVE).length === 1, "the kick");
    const lines = h.logger.lines.slice(before).map((l) => l.msg);
    const kicked = lines.findIndex((m) => m.includes("kicking a banned player"));
    const refresh = lines.findIndex((m) => m.startsWith("ban list not refreshed"));
    expect(kicked).toBeGreaterThanOrEqual(0);
    expect(refresh === -1 || kicked < refresh).toBe(true);
  });

  test("the service asked run to pause: the command is told at once (queued, exit 6's line), delivered after", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    await h.join(EVE);
    // Every ban answered 429 "wait 2 s": run's round waits it out (up to intervals.queues), the command does not.
    h.sb.control.rateLimit(1000, 2, { method: "POST", path: "/ban/" });
    const first = await cliBan(DAVE);
    expect(first.fate.result).toBe("kept");
    expect(first.fate.error).toMatch(
      /^VyHub asked to wait until \S+ \(rate limit\); the running hub-agent sends it then, and its log will say how VyHub answered$/,
    );
    // Answered from the pause, not at the command's bound (2 × api.timeout = 2 s).
    expect(first.ms).toBeLessThan(1_500);
    // A command handing over while the pause lasts is answered as its note is taken; the player is kicked all the same.
    const second = await cliBan(EVE);
    expect(second.fate.error).toStartWith("VyHub asked to wait until ");
    expect(second.ms).toBeLessThan(1_500);
    await until(() => kicks(EVE).length === 1, "Eve's kick");
    // The limit lifted and the pause over (the API client's gate reads the test's clock): run sends both, each once.
    h.sb.control.reset();
    await h.clock.advance(2_000);
    const banned = (p: { id: string }) => {
      const user = h.sb.state.findUser(p.id, "STEAM")?.id;
      return [...h.sb.state.bans.values()].filter((b) => user && b.user_id === user);
    };
    await pollUntil(() => banned(DAVE).length === 1 && banned(EVE).length === 1, "both bans at the service", {
      timeoutMs: 20_000,
      diagnostics: () => h.logger.lines.map((l) => l.msg).join("\n"),
    });
    // Settled: gone from the queue once run has the answers (the service records a ban before it answers).
    const queue = sanctionQueues(h.store).ban;
    const left = async () =>
      (await Promise.all([first.entry, second.entry].map((e) => queue.get(e.id)))).filter(Boolean);
    await pollUntil(async () => (await left()).length === 0, "both entries settled");
    await Bun.sleep(500);
    expect([banned(DAVE).length, banned(EVE).length]).toEqual([1, 1]);
  }, 30_000);

  test("a 429 on the way (the user lookup waits it out in the API client): the command is told at once too", async () => {
    // As run's client: a GET refused with 429 is tried again once its gate opens, inside the client.
    h = await harness({ env, features: [bans], retries: 2 });
    await h.startRun();
    // Dave is unknown to the service: the round looks him up first, and that GET is refused with "wait 2 s".
    h.sb.control.rateLimit(1000, 2, { method: "GET", path: /^\/user\// });
    const { fate, entry, ms } = await cliBan(DAVE);
    expect(fate.result).toBe("kept");
    expect(fate.error).toStartWith("VyHub asked to wait until ");
    expect(ms).toBeLessThan(1_500);
    // The limit lifted and its wait over (the gate reads the test's clock): delivered, once.
    h.sb.control.reset();
    await h.clock.advance(2_000);
    await pollUntil(async () => !(await sanctionQueues(h.store).ban.get(entry.id)), "the ban settled");
    const user = h.sb.state.findUser(DAVE.id, "STEAM")?.id;
    expect([...h.sb.state.bans.values()].filter((b) => user && b.user_id === user)).toHaveLength(1);
  }, 30_000);
});

describe("a command beside a run that finds no service", () => {
  const bansOf = (p: { id: string }) => {
    const user = h.sb.state.findUser(p.id, "STEAM")?.id;
    return [...h.sb.state.bans.values()].filter((b) => user && b.user_id === user);
  };
  const NO_ANSWER =
    /^VyHub has not answered the running hub-agent for \d+ s \(GET \/user\/\S+: .+\); it sends it once VyHub answers, and its log will say how VyHub answered$/;

  /** The service back, the client's backoff over (it sleeps on the test's clock): each ban reaches it, once. */
  async function deliveredOnce(players: { id: string }[]) {
    await pollUntil(
      async () => {
        await h.clock.advance(1_000);
        return players.every((p) => bansOf(p).length === 1);
      },
      "the bans at the service",
      { timeoutMs: 20_000, diagnostics: () => h.logger.lines.map((l) => l.msg).join("\n") },
    );
    await Bun.sleep(300);
    expect(players.map((p) => bansOf(p).length)).toEqual(players.map(() => 1));
  }

  test("connections refused: told at once, not after the user lookup's retries; delivered once it is back", async () => {
    // run's client tries a lookup again after a backoff; the command does not wait for those (its bound: 2 s).
    h = await harness({ env, features: [bans], retries: 2 });
    await h.startRun();
    await h.sb.control.down();
    const first = await cliBan(DAVE);
    expect(first.fate.result).toBe("kept");
    expect(first.fate.error).toMatch(NO_ANSWER);
    expect(first.ms).toBeLessThan(1_500);
    // run knows now: the next command is answered as its note is taken.
    const second = await cliBan(EVE);
    expect(second.fate.error).toMatch(NO_ANSWER);
    expect(second.ms).toBeLessThan(1_500);
    await h.sb.control.up();
    await deliveredOnce([DAVE, EVE]);
  }, 30_000);

  test("known down: a command on the desk line is told before run even reads its entry (a slow disk waits for none)", async () => {
    h = await harness({ env, features: [bans], retries: 2 });
    await h.startRun();
    await h.sb.control.down();
    await cliBan(DAVE); // run learns the service is down
    // run's reads of queued bans now take a second each (a disk under load).
    const queue = sanctionQueues(h.store).ban;
    const get = queue.get.bind(queue);
    queue.get = (async (id: string) => (await Bun.sleep(1_000), get(id))) as typeof queue.get;
    const { fate, ms } = await cliBan(EVE);
    expect(fate.result).toBe("kept");
    expect(fate.error).toMatch(NO_ANSWER);
    expect(ms).toBeLessThan(500);
    queue.get = get;
    await h.sb.control.up();
    await deliveredOnce([DAVE, EVE]);
  }, 30_000);

  test("after a quiet spell the service is back: the command waits for one attempt and has VyHub's answer", async () => {
    h = await harness({ env: { ...env, HUB_INTERVALS_STATUS: "3600" }, features: [bans] }); // no retries
    await h.startRun();
    await h.sb.control.down();
    expect((await cliBan(DAVE)).fate.result).toBe("kept"); // run's lookup found no service
    await h.sb.control.up();
    // run asks nothing for 31 s (its next queue round is at 60 s): what it knows of the service is that old.
    await h.clock.advance(31_000);
    const later = await cliBan(EVE);
    expect(later.fate.result).toBe("delivered");
    await pollUntil(() => bansOf(EVE).length === 1, "Eve's ban at the service");
  }, 30_000);

  test("a quiet spell, then the clock set back an hour: the command still waits for one attempt, not told at once", async () => {
    h = await harness({ env: { ...env, HUB_INTERVALS_STATUS: "3600" }, features: [bans] });
    await h.startRun();
    await h.sb.control.down();
    expect((await cliBan(DAVE)).fate.result).toBe("kept");
    await h.sb.control.up();
    await h.clock.advance(31_000);
    h.clock.jump(-3600_000); // NTP steps the wall clock back an hour
    const later = await cliBan(EVE);
    expect(later.fate.result).toBe("delivered");
    await pollUntil(() => bansOf(EVE).length === 1, "Eve's ban at the service");
  }, 30_000);

  test("no answer at all: the first command waits one attempt (api.timeout), the next not at all", async () => {
    h = await harness({ env, features: [bans], retries: 2, timeoutMs: 1_000 }); // run's api.timeout, as env's
    await h.startRun();
    h.sb.control.latency(4_000); // every request hangs past api.timeout (1 s), when each attempt gives up
    const first = await cliBan(DAVE);
    expect(first.fate.error).toMatch(NO_ANSWER);
    expect(first.fate.error).toContain("timed out");
    expect(first.ms).toBeLessThan(1_900); // its bound is 2 s; the lookup's retry alone would take past it
    const second = await cliBan(EVE);
    expect(second.fate.error).toMatch(NO_ANSWER);
    expect(second.ms).toBeLessThan(900);
    h.sb.control.reset();
    await deliveredOnce([DAVE, EVE]);
  }, 30_000);
});

describe("a round that fails", () => {
  test("the store failing under run's round: the command is told at once why its ban stays queued", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    await h.idle(); // run's first round is over: the failure below is the handed-over ban's round's (CI saw it taken)
    // run's store refuses the delivery lock's file once (a disk error): its round for the handed-over ban throws.
    const withLock = h.store.withLock.bind(h.store);
    let fail = 1;
    h.store.withLock = ((name, fn, o) => {
      if (name === DELIVERY_LOCK && fail-- > 0)
        return Promise.reject(Object.assign(new Error("EIO: i/o error, open 'locks/sanctions.lock'"), { code: "EIO" }));
      return withLock(name, fn, o);
    }) as typeof h.store.withLock;
    const { fate, entry } = await cliBan(DAVE);
    expect(fate.result).toBe("kept");
    // Not "had not answered within 2 s" (the command's own bound): the round's failure, said as it happened.
    expect(fate.error).toContain("EIO: i/o error");
    // Still queued, and the next round delivers it.
    await h.clock.advance(60_000);
    await pollUntil(async () => !(await sanctionQueues(h.store).ban.get(entry.id)), "the ban delivered later", {
      timeoutMs: 10_000,
    });
  }, 30_000);
});

describe("the desk line", () => {
  /** The file names written in the note and answer boxes while `fn` runs. */
  async function filesDuring(fn: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const watchers = [handoffBox(h.store).dir, outcomeBox(h.store).dir].map((dir) => {
      mkdirSync(dir, { recursive: true });
      return watch(dir, (_, name) => seen.push(String(name)));
    });
    try {
      await fn();
      await Bun.sleep(50);
      return seen;
    } finally {
      for (const w of watchers) w.close();
    }
  }

  test("an entry handed over on the line is answered there: no note, no answer file", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    const before = h.sb.state.bans.size;
    let fate;
    expect(await filesDuring(async () => ({ fate } = await cliBan(DAVE)))).toEqual([]);
    expect(fate!.result).toBe("delivered");
    expect(h.sb.state.bans.size).toBe(before + 1);
  });

  test("no socket (a storage path too deep for one): handed over by note, answered in a file", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    await until(() => existsSync(`${h.store.dir}/${KICK_SOCKET}`), "the desk line");
    unlinkSync(`${h.store.dir}/${KICK_SOCKET}`);
    const before = h.sb.state.bans.size;
    let fate;
    expect((await filesDuring(async () => ({ fate } = await cliBan(DAVE)))).length).toBeGreaterThan(0);
    expect(fate!.result).toBe("delivered");
    expect(h.sb.state.bans.size).toBe(before + 1);
  });

  test("run hangs up without an answer and lives on (a reload): the note hands it over, delivered once", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    const path = `${h.store.dir}/${KICK_SOCKET}`;
    await until(() => existsSync(path), "the desk line");
    // In the socket's place, one that takes the line and hangs up, as a stopping agent does.
    unlinkSync(path);
    const hangUp = createServer((c: Socket) => c.once("data", () => c.destroy()));
    await new Promise<void>((resolve) => hangUp.listen(path, resolve));
    const before = h.sb.state.bans.size;
    try {
      const { fate } = await cliBan(DAVE);
      expect(fate.result).toBe("delivered");
      await Bun.sleep(200);
      expect(h.sb.state.bans.size).toBe(before + 1);
      expect(await handoffBox(h.store).list()).toEqual([]);
    } finally {
      hangUp.close();
    }
  });
});

describe("the player's lookup at VyHub", () => {
  test("goes out as the note is taken, beside the round's lock and reads, and is asked once", async () => {
    h = await harness({ env, features: [bans] });
    // A player VyHub knows: "not found" would be asked again (it goes stale once anyone creates the user).
    h.sb.state.addUser({ identifier: DAVE.id, type: "STEAM", username: DAVE.name });
    await h.startRun();
    await h.idle(); // run's first round is over: the next to take the delivery lock is Dave's
    const lookups = () => h.sb.control.requests({ method: "GET", path: new RegExp(`^/user/${DAVE.id}`) }).length;
    // When run's round takes the delivery lock: has Dave's lookup reached VyHub yet (waited for up to 1 s)?
    const atLock: boolean[] = [];
    const withLock = h.store.withLock.bind(h.store);
    h.store.withLock = (async (name, fn, o) => {
      if (name === DELIVERY_LOCK && !atLock.length)
        atLock.push(
          await pollUntil(() => lookups() > 0, "the lookup", { timeoutMs: 1_000 }).then(
            () => true,
            () => false,
          ),
        );
      return withLock(name, fn, o);
    }) as typeof h.store.withLock;
    const { fate } = await cliBan(DAVE);
    expect(fate.result).toBe("delivered");
    expect(atLock).toEqual([true]);
    expect(lookups()).toBe(1); // the round took that answer instead of asking again
  });
});

describe("a delivery whose entry cannot be removed", () => {
  test("the command is told delivered (VyHub has it); the entry is looked up later and settled, never resent", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    // run's store refuses to remove the entry once (a disk error) after VyHub accepted the ban.
    const queue = sanctionQueues(h.store).ban;
    const remove = queue.remove.bind(queue);
    let fail = 1;
    queue.remove = (id, known) =>
      fail-- > 0
        ? Promise.reject(Object.assign(new Error("EIO: i/o error, unlink"), { code: "EIO" }))
        : remove(id, known);
    const { fate, entry } = await cliBan(DAVE);
    expect(fate.result).toBe("delivered");
    expect(await queue.get(entry.id)).toMatchObject({ attempts: 1, uncertain: true });
    // After its settle time, a later round looks it up at VyHub, finds it, and removes it without sending it again.
    await pollUntil(
      async () => {
        await h.clock.advance(60_000);
        return !(await queue.get(entry.id));
      },
      "the entry settled",
      { timeoutMs: 10_000 },
    );
    const user = h.sb.state.findUser(DAVE.id, "STEAM")?.id;
    expect([...h.sb.state.bans.values()].filter((b) => user && b.user_id === user)).toHaveLength(1);
    expect(h.sb.control.requests({ method: "POST", path: "/ban/" })).toHaveLength(1);
  }, 30_000);
});

describe("commands back to back for one player", () => {
  test("each is delivered, none told it waits for the one before (which run had just answered)", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    await h.join(DAVE);
    // A command starts the moment the one before has its answer, while run's round for that player still ends.
    const results: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { fate } = await cliBan(DAVE);
      results.push(fate.result === "delivered" ? "delivered" : `${fate.result}: ${fate.error}`);
    }
    expect(results).toEqual(Array(20).fill("delivered"));
  }, 60_000);
});

describe("commands at once for many players", () => {
  test("each handed-over entry is taken once: one log line each, one answer each", async () => {
    h = await harness({ env, features: [bans] });
    await h.startRun();
    const players = Array.from({ length: 12 }, (_, i) => ({ id: `7656119800000010${10 + i}`, name: `P${i}` }));
    // Notes keep arriving while run answers earlier ones: a take then lists a note whose answer is being written.
    const done = await Promise.all(players.map((p, i) => Bun.sleep(i * 4).then(() => cliBan(p))));
    expect(done.map((d) => d.fate.result)).toEqual(Array(players.length).fill("delivered"));
    const taken = h.logger.lines.filter((l) => l.msg.includes("from another hub-agent process"));
    const ids = taken.map((l) => (l.data as { entry: string }).entry);
    expect(ids.sort()).toEqual(done.map((d) => d.entry.id).sort());
    // No answer written twice: a second one, after the command read and deleted the first, would be left lying there.
    await Bun.sleep(300);
    expect(await outcomeBox(h.store).list()).toEqual([]);
  }, 60_000);
});
