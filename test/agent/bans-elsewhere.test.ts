/**
 * Sanctions a one-shot CLI process issues while `run` runs: the CLI's delivery round (lib/app/sanction.ts, on a second
 * store over the same directory, as another process has) leaves the "sanctions_changed" marker; `run` refreshes its
 * ban list on its next queue round, or at once through the directory watch, without waiting for intervals.bans.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { type DeliveryKind, deliverEntry } from "../../lib/app/sanction.ts";
import { type Session, openSession } from "../../lib/app/session.ts";
import { bans } from "../../lib/features/bans.ts";
import { SEED_IDS } from "../../lib/sandbox/seed.ts";
import { type PlayerRef, queueBan, queueUnban } from "../../lib/sanctions/index.ts";
import { harness, until, type Harness } from "./harness.ts";

const MIN = 60_000;
const BOB = { id: SEED_IDS.steamid64.bob, name: "Bob" };
const DAVE = { id: "76561198000000004", name: "Dave" };
// The list refresh is an hour away: whatever happens within a minute is the marker's doing.
const env = { HUB_INTERVALS_BANS: "3600", HUB_INTERVALS_QUEUES: "60" };

let h: Harness;
afterEach(() => h?.close());

const start = async () => {
  await h.agent.start();
  await h.idle();
};
const join = async (p: { id: string; name: string }) => {
  h.sim.join(p);
  await h.idle();
};
const kicks = (p: { id: string }) => h.sim.actionsOf("kick").filter((k) => k.player === p.id);
const banFetches = () => h.sb.control.requests({ method: "GET", path: `/server/bundle/${h.sb.bundleId}/ban` });
const ref = (p: { id: string; name: string }): PlayerRef => ({
  identifier: p.id,
  type: "STEAM",
  user_id: null,
  name: p.name,
});

/** What `hub-agent ban|unban` does in its own process: its own session (store and client) on the same directory. */
const cli = () => openSession({ config: async () => h.config, logger: h.logger, watched: [] });
/** The entry's own round, as the command runs it; its fate. */
const deliver = async (s: Session, kind: DeliveryKind, entryId: string) => {
  const d = await deliverEntry(s, kind, entryId);
  if (d.status === "credentials") throw new Error(d.message);
  return d.fate;
};
const cliBan = async (p: { id: string; name: string }) => {
  const s = cli();
  const entry = await queueBan(await s.store(), {
    target: ref(p),
    length: 600,
    reason: "griefing",
    creator: null,
    serverbundleId: h.sb.bundleId,
  });
  return deliver(s, "ban", entry.id);
};
const cliUnban = async (p: { id: string; name: string }) => {
  const s = cli();
  const { entry } = await queueUnban(await s.store(), {
    target: ref(p),
    processor: null,
    serverbundleId: h.sb.bundleId,
  });
  return deliver(s, "unban", entry.id);
};

describe("sanctions a CLI process delivers while run runs", () => {
  test("a CLI ban: the next queue round sees the marker, refreshes the list and kicks the player", async () => {
    h = await harness({ env, features: [(a) => bans(a, { watch: false })] });
    await start();
    await join(DAVE);
    expect((await cliBan(DAVE)).result).toBe("delivered");
    const ban = [...h.sb.state.bans.values()].find((b) => b.reason === "griefing")!;
    await h.idle();
    expect(kicks(DAVE)).toHaveLength(0); // not watched: waits for the queue round
    await h.clock.advance(MIN);
    await h.idle();
    expect(kicks(DAVE)).toHaveLength(1);
    expect(kicks(DAVE)[0]!.text).toContain(`Ban ID: ${ban.id}`);
    expect(h.logger.lines.some((l) => l.msg.includes("another hub-agent process changed the sanctions"))).toBe(true);
    // Seen once: the following rounds don't refresh again.
    const fetches = banFetches().length;
    await h.clock.advance(MIN);
    await h.idle();
    expect(banFetches()).toHaveLength(fetches);
  });

  test("watched: a CLI ban kicks the player without any clock advance", async () => {
    h = await harness({ env, features: [bans] });
    await start();
    await join(DAVE);
    await cliBan(DAVE);
    await until(() => kicks(DAVE).length === 1, "the kick after the CLI's ban");
    expect(kicks(DAVE)[0]!.text).toContain("Reason: griefing");
  });

  test("watched: after a CLI unban the player is no longer kicked from the stale list", async () => {
    h = await harness({ env, features: [bans] });
    await start();
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(1); // seeded active ban
    const fetches = banFetches().length;
    expect((await cliUnban(BOB)).result).toBe("delivered");
    await until(() => banFetches().length > fetches, "the refresh after the CLI's unban");
    await h.idle();
    await join(BOB);
    expect(kicks(BOB)).toHaveLength(1);
    expect(h.sim.isOnline(BOB.id)).toBe(true);
  });

  test("a CLI ban the service did not take stays queued and still kicks at once (as a pending ban)", async () => {
    h = await harness({ env, features: [bans] });
    await start();
    await join(DAVE);
    await h.sb.control.down();
    expect((await cliBan(DAVE)).result).toBe("kept");
    await until(() => kicks(DAVE).length === 1, "the kick of the queued ban");
    expect(kicks(DAVE)[0]!.text).toContain("Ban ID: pending");
  });
});
