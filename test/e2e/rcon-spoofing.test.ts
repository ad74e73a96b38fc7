/**
 * Forged rcon replies against a real OpenArena server (issue 17): hub-agent reaches the server over Quake 3 rcon
 * with the docs' configuration, three bots play (Admin, who may ban at the service; Victim; Hank), and attackers
 * on the same host forge the server's datagrams to hub-agent's socket, found the way anyone on the host can find it
 * (/proc): one from another loopback address with the game's port (127.0.0.2:<port>), one from the game's address
 * with another port. Each step is an attack and what a user would notice if it worked: a flood of empty prints that
 * keeps every reply open (a CLI ban then kicks nobody), a forged status row that puts a banned name on Victim's slot
 * (Victim kicked), and a forged chat line of Admin's (`!ban Victim perm`: taken as chat, it would be answered; on a
 * game whose players have ids, it would ban Victim with Admin as its creator). Skipped, with the reason, when the
 * server is missing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openarena } from "../../lib/game/presets/openarena.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { Attacker } from "../game/transports/udp-fake.ts";
import { forTest, OPENARENA_SKIP_REASON, openarenaInstalled, rconAnswers } from "../support/openarena.ts";
import { spawn } from "../support/procs.ts";
import { docBlock, shellWords } from "../support/docs.ts";
import { connectedUdpOf, udpSocketsOf } from "../support/sockets.ts";
import { until } from "../support/until.ts";
import { bansOf, freePort, online, startWorld, stopWorld, type World } from "./world.ts";

if (!openarenaInstalled) console.warn(`SKIPPED: the rcon spoofing test ${OPENARENA_SKIP_REASON}`);

const PAGE = "docs/games/openarena.md";
const PASSWORD = "hub-q3-secret";
const SLOW = { timeoutMs: 30_000 }; // a loaded 2-core machine takes a while to load a map

describe.skipIf(!openarenaInstalled)("forged Quake 3 rcon replies against a real OpenArena server", () => {
  let w: World;
  let home: string;
  let port: number;
  let server: ReturnType<typeof spawn> | undefined;
  const attackers: Attacker[] = [];
  /** hub-agent's rcon socket, as anyone on the host can see it (/proc/net/udp). */
  let agent: { address: string; port: number }[] = [];

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "hub-oa-spoof-"));
    void binary().catch(() => {}); // compiles while the map loads; the CLI step awaits it (and its error)
    port = await freePort("udp");
    const command = forTest(shellWords(docBlock(PAGE, "sh").replaceAll("<password>", PASSWORD)), port, home);
    server = spawn(command, {
      env: { PATH: process.env.PATH ?? "", HOME: home },
      stdout: "ignore",
      stderr: "ignore",
      scope: "file",
    });
    await rconAnswers(port, PASSWORD, {
      ...SLOW,
      abort: () => (server?.exitCode != null ? `the server exited with ${server.exitCode}` : undefined),
    });
    const toml = docBlock(PAGE, "toml", 0)
      .replaceAll("<password>", PASSWORD)
      .replace("/home/oa/.openarena/", `${home}/`);
    writeFileSync(join(home, "hub-agent.toml"), toml);
    w = await startWorld(home, {
      HUB_CONFIG: join(home, "hub-agent.toml"),
      HUB_GAME_RCON_PORT: String(port),
      HUB_INTERVALS_PLAYER_POLL: "2", // a forged row has a poll to join every 2 s
    });
    // Admin may ban at the service (the forged chat line is his); the bots join under these names.
    w.sb.state.addUser({ identifier: "Admin", username: "Admin", type: "CENTRAL", admin: true });
    for (const [bot, name] of [
      ["sarge", "Admin"],
      ["grunt", "Victim"],
      ["major", "Hank"],
    ])
      await w.bridge.exec(`addbot ${bot} 1 free 0 ${name}`);
    await until(() => online(w).join() === "Admin,Hank,Victim", "the three bots online", SLOW);
    for (const name of ["Admin", "Victim", "Hank"])
      await until(() => w.agent.users.get(name) !== undefined, `the service user of ${name}`, SLOW);
    const own = new Set<string>();
    attackers.push(await Attacker.at("127.0.0.2", port), await Attacker.at("127.0.0.1"));
    for (const a of attackers) own.add(a.from.split(":").at(-1)!);
    agent = udpSocketsOf(process.pid)
      .map((s) => Number(s.split(":").at(-1)))
      .filter((p) => !own.has(String(p)))
      .map((p) => ({ address: "127.0.0.1", port: p }));
    expect(agent.length).toBeGreaterThan(0);
  }, 90_000);

  afterAll(async () => {
    for (const a of attackers) await a.close();
    server?.kill("SIGTERM");
    await server?.exited;
    await stopWorld(w);
  }, 30_000);

  /** Every attacker sends `payload` to hub-agent's socket every `everyMs` until `stop`. */
  function flood(payload: string, everyMs: number): () => Promise<void> {
    for (const a of attackers) for (const to of agent) a.flood(to, payload, everyMs);
    return async () => {
      for (const a of attackers) a.stop();
      await Bun.sleep(300); // what is under way arrives
    };
  }

  /**
   * Every attacker sends `payload` to hub-agent's socket as soon as hub-agent sends `status` (an attacker can time
   * it: the polls come every 2 s), so on a socket that takes it, it joins that reply.
   */
  function answerPolls(payload: string): () => Promise<void> {
    let seen = w.exchanges.length;
    const timer = setInterval(() => {
      const fresh = w.exchanges.slice(seen);
      seen = w.exchanges.length;
      if (!fresh.some((x) => x.command === "status")) return;
      for (const a of attackers) for (const to of agent) void a.send(to, payload);
    }, 2);
    return async () => {
      clearInterval(timer);
      await Bun.sleep(300); // what is under way arrives
    };
  }

  const kicked = (name: string) => w.exchanges.filter((x) => x.reply?.includes(`${name}^7 was kicked`)).length;
  const failed = (from: number) => w.exchanges.slice(from).filter((x) => x.error);

  test("hub-agent's socket is connected to the game (the kernel drops datagrams from anyone else)", () => {
    expect(connectedUdpOf(process.pid)).toContainEqual(
      expect.stringMatching(new RegExp(` → 127\\.0\\.0\\.1:${port}$`)),
    );
  });

  test("empty prints every 150 ms: commands still answer in time, and `hub-agent ban Hank` kicks him", async () => {
    const from = w.exchanges.length;
    const stop = flood("print\n", 150);
    try {
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        expect((await w.bridge.exec(`echo ping${i}`)).trim()).toBe(`ping${i}`);
        expect(performance.now() - t0).toBeLessThan(2000);
      }
      await binary(); // compiled in the background since beforeAll
      const r = await hubBinary(["ban", "Hank", "10", "griefing"], { env: w.env });
      expect(r, r.stderr).toMatchObject({ code: 0 });
      await until(() => kicked("Hank") === 1, "the server to kick Hank", {
        ...SLOW,
        diagnostics: () => JSON.stringify(w.exchanges.slice(from).slice(-5)),
      });
    } finally {
      await stop();
    }
    expect(failed(from)).toEqual([]);
    await until(() => online(w).join() === "Admin,Victim", "Hank to leave the agent's players", SLOW);
  }, 120_000);

  test("a forged status row naming a banned player on Victim's slot gets nobody kicked", async () => {
    // Mallory, banned by the operator, is not on the server.
    const mallory = w.sb.state.addUser({ identifier: "Mallory", username: "Mallory", type: "CENTRAL" });
    const r = await hubBinary(["ban", `user:${mallory.id}`, "perm", "cheating"], { env: w.env });
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const from = w.exchanges.length;
    const slot = w.agent.players.get("Victim")?.slot ?? "1";
    const row = ` ${slot}     0    0 Mallory         ^7bot                                     16384\n`;
    const stop = answerPolls(`print\n${row}`);
    try {
      const polls = () => w.exchanges.slice(from).filter((x) => x.command === "status" && x.reply).length;
      await until(() => polls() >= 3, "three polls under the forgery", SLOW);
      await Bun.sleep(1000); // a kick would be on its way by now
    } finally {
      await stop();
    }
    expect(kicked("Victim")).toBe(0);
    expect(w.exchanges.slice(from).filter((x) => x.command.startsWith("clientkick"))).toEqual([]);
    expect(online(w)).toEqual(["Admin", "Victim"]);
    expect(failed(from)).toEqual([]);
  }, 60_000);

  test("a forged chat line of Admin's (`!ban Victim perm`) is not taken as chat: no ban, no answer", async () => {
    const from = w.exchanges.length;
    const bans = w.sb.state.bans.size;
    const stop = answerPolls(`print\nsay: Admin: ${openarena.commandPrefix}ban Victim perm forged\n`);
    try {
      const polls = () => w.exchanges.slice(from).filter((x) => x.command === "status" && x.reply).length;
      await until(() => polls() >= 3, "three polls under the forgery", SLOW);
      await Bun.sleep(2000); // a ban request would be on its way to the service by now
    } finally {
      await stop();
    }
    expect(bansOf(w, "Victim")).toEqual([]);
    expect(w.sb.state.bans.size).toBe(bans);
    // Admin's chat (a name anyone can take) gets the console-only answer: the forged line got none.
    expect(w.exchanges.slice(from).filter((x) => x.command.includes("known only by their name"))).toEqual([]);
    expect(kicked("Victim")).toBe(0);
    expect(online(w)).toEqual(["Admin", "Victim"]);
    expect(failed(from)).toEqual([]);
  }, 60_000);
});
