/**
 * The kick line (lib/sanctions/kick-line.ts, lib/features/kick-line.ts): a command beside a running `run` announces
 * its ban over a socket in the storage directory before writing anything, and `run` kicks the player at once, from
 * the line alone. What `run` would not enforce from its queue kicks nobody, a bad line is refused in one log line and
 * the line goes on working; only the directory's owner can reach it, and it goes when `run` stops.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { connect } from "node:net";
import { bans } from "../../lib/features/bans.ts";
import { KICK_SOCKET, MAX_LINE, sendKick } from "../../lib/sanctions/kick-line.ts";
import { type NewBan, banEntry, sanctionQueues } from "../../lib/sanctions/index.ts";
import { harness, until, type Harness } from "./harness.ts";

const DAVE = { id: "76561198000000004", name: "Dave" };
const EVE = { id: "76561198000000005", name: "Eve" };
const env = { HUB_INTERVALS_BANS: "3600", HUB_INTERVALS_QUEUES: "3600" };

let h: Harness;
afterEach(() => h?.close());

const socketPath = () => `${h.store.dir}/${KICK_SOCKET}`;
const kicks = (p: { id: string }) => h.sim.actionsOf("kick").filter((k) => k.player === p.id);
const refusedLines = () => h.logger.lines.filter((l) => l.msg.startsWith("a kick line")).map((l) => l.msg);

async function startRun() {
  h = await harness({ env, features: [bans] });
  await h.startRun();
  await until(() => existsSync(socketPath()), "the kick line");
  await h.join(DAVE);
  await h.join(EVE);
}

const ban = (p: { id: string; name: string }, o: Partial<NewBan> = {}, at = h.clock.now()) =>
  banEntry(
    {
      target: { identifier: p.id, type: "STEAM", user_id: null, name: p.name },
      length: 3600,
      reason: "griefing",
      creator: null,
      serverbundleId: h.sb.bundleId,
      ...o,
    },
    at,
  );

/** Writes `bytes` to the kick line as a careless or hostile local process would, and waits for `run` to hang up. */
function raw(bytes: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ path: socketPath() }, () => s.write(bytes));
    s.on("close", () => resolve());
    s.on("error", () => resolve());
  });
}

test("an announced ban kicks the player at once, from the line alone; nothing is queued by it", async () => {
  await startRun();
  expect(statSync(socketPath()).mode & 0o777).toBe(0o600);
  expect(await sendKick(h.store.dir, ban(DAVE))).toBe(true);
  await until(() => kicks(DAVE).length === 1, "the kick");
  expect(kicks(DAVE)[0]!.text).toContain("Reason: griefing");
  expect(kicks(DAVE)[0]!.text).toContain("Ban ID: pending");
  expect(await sanctionQueues(h.store).ban.size()).toBe(0);
  expect(kicks(EVE)).toHaveLength(0);
});

test("what run would not enforce from its queue kicks nobody: a ban only the service may accept, one ended, one lifted", async () => {
  await startRun();
  const hourAgo = h.clock.now() - 3_600_000;
  for (const b of [
    ban(DAVE, { enforce: "on_accept" }),
    ban(DAVE, { length: 60 }, hourAgo),
    { ...ban(DAVE), status: "UNBANNED" as const },
  ])
    expect(await sendKick(h.store.dir, b)).toBe(true);
  // A valid line after them is taken: the three were read and passed over.
  await sendKick(h.store.dir, ban(EVE));
  await until(() => kicks(EVE).length === 1, "Eve's kick");
  await Bun.sleep(50);
  expect(kicks(DAVE)).toHaveLength(0);
});

test("a line read late (run held while the ban was lifted) or from the future is passed over: the queue decides", async () => {
  await startRun();
  // Issued 5 s before run reads it, and holding still: the unban a stopped `run` did not see may have come since.
  expect(await sendKick(h.store.dir, ban(DAVE, {}, h.clock.now() - 5_000))).toBe(true);
  expect(await sendKick(h.store.dir, ban(DAVE, {}, h.clock.now() + 5_000))).toBe(true);
  await sendKick(h.store.dir, ban(EVE));
  await until(() => kicks(EVE).length === 1, "Eve's kick");
  await Bun.sleep(50);
  expect(kicks(DAVE)).toHaveLength(0);
  const passed = h.logger.lines.filter((l) => l.msg.includes("was passed over")).map((l) => l.msg);
  expect(passed).toEqual([
    "a kick line 5000 ms old was passed over: the ban's queue entry decides",
    "a kick line dated 5000 ms ahead was passed over: the ban's queue entry decides",
  ]);
});

test("garbage, a wrong shape and an oversized line are refused in one log line each; the line keeps working", async () => {
  await startRun();
  await raw("not json\n");
  await raw(`${JSON.stringify({ ban: { ...ban(DAVE), length: "forever" } })}\n`);
  await raw(new Uint8Array(MAX_LINE + 10).fill(0x61));
  await until(() => refusedLines().length === 3, "three refusals");
  expect(refusedLines()[0]).toBe("a kick line was refused: not JSON");
  expect(refusedLines()[1]).toStartWith("a kick line was refused: ");
  expect(refusedLines()[2]).toBe(`a kick line longer than ${MAX_LINE} bytes was refused`);
  expect(kicks(DAVE)).toHaveLength(0);
  expect(await sendKick(h.store.dir, ban(DAVE))).toBe(true);
  await until(() => kicks(DAVE).length === 1, "the kick");
});

/** Sends `lines` on one connection and returns what `run` answers before it hangs up. */
function converse(...lines: string[]): Promise<string> {
  return new Promise((resolve) => {
    let said = "";
    const s = connect({ path: socketPath() }, () => s.write(lines.join("")));
    s.on("data", (d) => (said += d.toString()));
    s.on("close", () => resolve(said));
    s.on("error", () => resolve(said));
  });
}

test("a take line: an entry not queued is answered at once; a bad id, a third line, a second ban are refused", async () => {
  await startRun();
  const take = (id: string) => `${JSON.stringify({ take: { kind: "ban", id, pid: 1 } })}\n`;
  expect(JSON.parse(await converse(take("001796274978616-gone")))).toEqual({ fate: { result: "elsewhere" } });
  expect(await converse(take("../../etc/passwd"))).toBe("");
  const kick = `${JSON.stringify({ ban: ban(EVE) })}\n`;
  expect(await converse(kick, take("001796274978616-gone"), take("001796274978616-again"))).toBe("");
  expect(await converse(kick, kick)).toBe("");
  await until(() => refusedLines().length === 3, "three refusals");
  expect(refusedLines()[0]).toStartWith("a kick line was refused: ");
  expect(refusedLines().slice(1)).toEqual([
    "a kick line was refused: a line after the connection's last",
    "a kick line was refused: a second ban on one connection",
  ]);
  expect(await sanctionQueues(h.store).ban.size()).toBe(0);
});

test("the socket goes when run stops, and a command then goes on without it", async () => {
  await startRun();
  await h.close();
  await until(() => !existsSync(socketPath()), "the socket to go");
  expect(await sendKick(h.store.dir, ban(DAVE))).toBe(false);
});

test("a stop while the socket is being made: none is left listening", async () => {
  h = await harness({ env, features: [bans] });
  await h.agent.start();
  await h.close();
  await Bun.sleep(200);
  expect(existsSync(socketPath())).toBe(false);
});

test("something in the socket's place (a directory): one warning naming the path; the line is off, nothing else", async () => {
  h = await harness({ env, features: [bans] });
  mkdirSync(socketPath());
  await h.agent.start();
  await until(() => h.logger.lines.some((l) => l.msg.startsWith(`no kick line at ${socketPath()}`)), "the warning");
  const line = h.logger.lines.find((l) => l.msg.startsWith("no kick line at"))!;
  expect(line.level).toBe("warn");
  expect(line.msg).toContain("remove what is at that path");
  expect(await sendKick(h.store.dir, ban(DAVE))).toBe(false);
});
