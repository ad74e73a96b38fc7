import { describe, expect, test } from "bun:test";
import type { BridgeEvent } from "../../lib/game/bridge.ts";
import { ManualClock } from "../../lib/clock.ts";
import { memoryLogger } from "../../lib/log.ts";
import { ALL_EVENT_TYPES, SimGame, type SimGameOptions } from "../../lib/game/sim.ts";
import { simEscape } from "../../lib/game/sim-escape.ts";
import { DEMO_PLAYERS, demoTimeline, playTimeline } from "../../lib/app/demo-timeline.ts";
import { parseSimConsole } from "../support/sim-console.ts";

const alice = { id: "76561198012345671", name: "Alice" };
const bob = { id: "76561198087654322", name: "Bob" };

function setup(o: SimGameOptions = {}) {
  const clock = new ManualClock();
  const sim = new SimGame({ clock, ...o });
  const events: BridgeEvent[] = [];
  sim.on((e) => events.push(e));
  return { clock, sim, events };
}

describe("SimGame controls", () => {
  test("defaults and caps", async () => {
    const sim = new SimGame();
    expect(sim.userType).toBe("STEAM");
    expect(sim.caps.multiGroup).toBe(false);
    expect(sim.caps.privateMessage).toBe(true);
    expect([...sim.caps.events].sort()).toEqual([...ALL_EVENT_TYPES].sort());
    expect(await sim.status()).toEqual({ players: [], maxPlayers: 24, map: "sim_island" });
  });

  test("map undefined when the game cannot tell; setMap changes it", async () => {
    const sim = new SimGame({ map: undefined, maxPlayers: 8 });
    const s = await sim.status();
    expect(s.map).toBeUndefined();
    expect(s.maxPlayers).toBe(8);
    sim.setMap("de_dust2");
    expect((await sim.status()).map).toBe("de_dust2");
  });

  test("start emits ready; unsubscribe stops delivery", async () => {
    const { sim, events } = setup();
    const seen: BridgeEvent[] = [];
    const off = sim.on((e) => seen.push(e));
    await sim.start();
    off();
    sim.join(alice);
    expect(seen).toEqual([{ type: "ready" }]);
    expect(events.map((e) => e.type)).toEqual(["ready", "player_connect"]);
    await sim.stop();
  });

  test("join, spawn, death, leave emit their events and maintain the online list", async () => {
    const { sim, events } = setup();
    sim.join({ ...alice, extra: { Score: 3 } });
    sim.join(bob);
    expect((await sim.status()).players.map((p) => p.id)).toEqual([alice.id, bob.id]);
    sim.spawn(alice.id);
    sim.death(alice.id, bob.id);
    sim.death(bob.id);
    sim.leave(alice.id, "Disconnect by user.");
    sim.leave(bob.id);
    expect(events).toEqual([
      { type: "player_connect", player: { ...alice, extra: { Score: 3 } } },
      { type: "player_connect", player: bob },
      { type: "player_spawn", player: { ...alice, extra: { Score: 3 } } },
      { type: "player_death", player: { ...alice, extra: { Score: 3 } }, killer: bob },
      { type: "player_death", player: bob },
      { type: "player_disconnect", player: { ...alice, extra: { Score: 3 } }, reason: "Disconnect by user." },
      { type: "player_disconnect", player: bob },
    ]);
    expect(sim.online()).toEqual([]);
  });

  test("controls on unknown or duplicate players throw; a full server refuses joins", () => {
    const { sim } = setup({ maxPlayers: 1 });
    expect(() => sim.leave(alice.id)).toThrow(/not online/);
    expect(() => sim.chat(alice.id, "!x")).toThrow(/not online/);
    sim.join(alice);
    expect(() => sim.join(alice)).toThrow(/already online/);
    expect(() => sim.join(bob)).toThrow(/full/);
    expect(() => sim.death(alice.id, bob.id)).toThrow(/not online/);
  });

  test("chat emits chat_command only for prefixed lines", () => {
    const { sim, events } = setup();
    sim.join(alice);
    events.length = 0;
    sim.chat(alice.id, "hello !dashboard");
    sim.chat(alice.id, "!");
    sim.chat(alice.id, '!Ban "Bad Guy" 1h  spam');
    sim.chat(alice.id, "!dashboard");
    expect(events).toEqual([
      { type: "chat_command", player: alice, command: "ban", args: ["Bad Guy", "1h", "spam"] },
      { type: "chat_command", player: alice, command: "dashboard", args: [] },
    ]);
  });

  test("a custom command prefix", () => {
    const { sim, events } = setup({ commandPrefix: "/" });
    sim.join(alice);
    sim.chat(alice.id, "!dashboard");
    sim.chat(alice.id, "/Shop");
    expect(events.at(-1)).toEqual({ type: "chat_command", player: alice, command: "shop", args: [] });
    expect(events.filter((e) => e.type === "chat_command")).toHaveLength(1);
  });

  test("groupChange emits group_change with seconds and by; works for offline players", () => {
    const { sim, events } = setup({ multiGroup: true });
    sim.join(bob);
    sim.groupChange(alice.id, "vip", "add", { seconds: 3600, byId: bob.id });
    sim.groupChange(alice.id, "admin", "add");
    sim.groupChange(alice.id, "vip", "remove");
    expect(events.slice(1)).toEqual([
      {
        type: "group_change",
        player: { id: alice.id, name: alice.id },
        group: "vip",
        op: "add",
        seconds: 3600,
        by: bob,
      },
      { type: "group_change", player: { id: alice.id, name: alice.id }, group: "admin", op: "add" },
      { type: "group_change", player: { id: alice.id, name: alice.id }, group: "vip", op: "remove" },
    ]);
    expect(sim.groupsOf(alice.id)).toEqual(["admin"]);
  });

  test("operatorInput emits operator_input", () => {
    const { sim, events } = setup();
    sim.operatorInput("ban Bob 1d griefing");
    expect(events).toEqual([{ type: "operator_input", line: "ban Bob 1d griefing" }]);
  });

  test("an event type not in `events` is never emitted", async () => {
    const { sim, events } = setup({ events: ["player_connect", "chat_command"] });
    expect([...sim.caps.events]).toEqual(["player_connect", "chat_command"]);
    await sim.start();
    sim.join(alice);
    sim.spawn(alice.id);
    sim.death(alice.id);
    sim.chat(alice.id, "!dashboard");
    sim.groupChange(alice.id, "vip", "add");
    sim.operatorInput("status");
    sim.down();
    sim.up();
    await sim.kick(alice, "bye");
    expect(events.map((e) => e.type)).toEqual(["player_connect", "chat_command"]);
  });

  test("a throwing listener is logged and does not stop the others", () => {
    const logger = memoryLogger();
    const sim = new SimGame({ logger });
    const seen: string[] = [];
    sim.on(() => {
      throw new Error("boom");
    });
    sim.on((e) => seen.push(e.type));
    sim.join(alice);
    expect(seen).toEqual(["player_connect"]);
    expect(sim.isOnline(alice.id)).toBe(true);
    expect(logger.lines.some((l) => l.level === "error" && l.tag === "sim")).toBe(true);
  });
});

describe("SimGame actions", () => {
  test("kick records, removes the player and emits disconnect with reason kicked", async () => {
    const { sim, events, clock } = setup();
    sim.join(alice);
    await clock.advance(5000);
    await sim.kick(alice, "You are banned");
    expect(sim.actions).toEqual([{ type: "kick", at: clock.now(), player: alice.id, text: "You are banned" }]);
    expect(sim.isOnline(alice.id)).toBe(false);
    expect(events.at(-1)).toEqual({ type: "player_disconnect", player: alice, reason: "kicked" });
  });

  test("kicking an offline player records the action but emits nothing", async () => {
    const { sim, events } = setup();
    await sim.kick(bob, "x");
    expect(sim.actionsOf("kick")).toHaveLength(1);
    expect(events).toEqual([]);
  });

  test("message and broadcast are recorded; actionsOf and clearActions", async () => {
    const { sim, clock } = setup();
    await sim.message(alice, "line 1\nline 2");
    await sim.message(null, "Server restart in 5 minutes");
    expect(sim.actionsOf("message")).toEqual([
      { type: "message", at: clock.now(), player: alice.id, text: "line 1\nline 2" },
    ]);
    expect(sim.actionsOf("broadcast")).toEqual([
      { type: "broadcast", at: clock.now(), text: "Server restart in 5 minutes" },
    ]);
    sim.clearActions();
    expect(sim.actions).toEqual([]);
  });

  test("single-group games replace the group on add", async () => {
    const { sim } = setup();
    await sim.setGroup(alice, "vip", "add");
    await sim.setGroup(alice, "admin", "add", 60);
    expect(sim.groupsOf(alice.id)).toEqual(["admin"]);
    await sim.setGroup(alice, "vip", "remove");
    expect(sim.groupsOf(alice.id)).toEqual(["admin"]);
    await sim.setGroup(alice, "admin", "remove");
    expect(sim.groupsOf(alice.id)).toEqual([]);
    expect(sim.actionsOf("set_group").map(({ group, op, seconds }) => ({ group, op, seconds }))).toEqual([
      { group: "vip", op: "add", seconds: undefined },
      { group: "admin", op: "add", seconds: 60 },
      { group: "vip", op: "remove", seconds: undefined },
      { group: "admin", op: "remove", seconds: undefined },
    ]);
  });

  test("multi-group games keep every group, without duplicates", async () => {
    const { sim } = setup({ multiGroup: true });
    await sim.setGroup(alice, "vip", "add");
    await sim.setGroup(alice, "admin", "add");
    await sim.setGroup(alice, "vip", "add");
    expect(sim.groupsOf(alice.id)).toEqual(["vip", "admin"]);
    await sim.setGroup(alice, "vip", "remove");
    expect(sim.groupsOf(alice.id)).toEqual(["admin"]);
    expect(sim.groupsOf(bob.id)).toEqual([]);
  });

  test("exec records the command and returns the configured reply", async () => {
    const { sim } = setup();
    expect(await sim.exec("say hi")).toBe("");
    sim.execReply = (c) => `ran ${c}`;
    expect(await sim.exec("give 1 weapon_ak47")).toBe("ran give 1 weapon_ak47");
    const fixed = new SimGame({ execReply: "ok" });
    expect(await fixed.exec("x")).toBe("ok");
    expect(sim.actionsOf("exec").map((a) => a.command)).toEqual(["say hi", "give 1 weapon_ak47"]);
  });

  test("fail(N) rejects the next N calls of that action only, then succeeds", async () => {
    const { sim } = setup();
    sim.fail("message", 2, "rcon timeout");
    await expect(sim.message(alice, "a")).rejects.toThrow("rcon timeout");
    await sim.message(null, "broadcasts are another action");
    await expect(sim.message(alice, "b")).rejects.toThrow("rcon timeout");
    await sim.message(alice, "c");
    expect(sim.actions.map((a) => a.text)).toEqual(["broadcasts are another action", "c"]);

    const custom = new Error("custom");
    sim.fail("status", 1, custom);
    await expect(sim.status()).rejects.toBe(custom);
    expect((await sim.status()).players).toEqual([]);

    sim.fail("exec");
    await expect(sim.exec("x")).rejects.toThrow("sim: exec failed");
    expect(await sim.exec("x")).toBe("");
  });

  test("down rejects every action until up; down and ready are emitted", async () => {
    const { sim, events } = setup();
    sim.join(alice);
    sim.down("crashed");
    expect(sim.isDown).toBe(true);
    await expect(sim.kick(alice, "x")).rejects.toThrow(/down \(crashed\)/);
    await expect(sim.message(alice, "x")).rejects.toThrow(/down/);
    await expect(sim.message(null, "x")).rejects.toThrow(/down/);
    await expect(sim.setGroup(alice, "vip", "add")).rejects.toThrow(/down/);
    await expect(sim.exec("x")).rejects.toThrow(/down/);
    await expect(sim.status()).rejects.toThrow(/down/);
    expect(sim.actions).toEqual([]);
    sim.up();
    await sim.kick(alice, "x");
    expect(events.map((e) => e.type)).toEqual(["player_connect", "down", "ready", "player_disconnect"]);
    expect(events[1]).toEqual({ type: "down", reason: "crashed" });
  });
});

describe("escape", () => {
  const hostile = [
    "x; op me",
    "a\nop me",
    "a\r\nop me",
    'say "hi"',
    '"; op me; "',
    "back\\slash",
    "trailing\\",
    '\\"; op me',
    "100%",
    "%s%n%x",
    "$(rm -rf /)",
    "${HOME}",
    "`id`",
    "tab\there",
    "nul\u0000byte",
    "bell\u0007esc\u001b[31m",
    "del\u007f c1\u0085",
    "line\u2028sep\u2029para",
    "Ünïcødé 名前 🎮",
    "lone \ud800 surrogate",
    "",
    "   ",
    "'single'",
    "// comment",
    "a;b;c",
  ];

  test.each(hostile.map((v) => [JSON.stringify(v), v]))("%s stays one argument of one command", (_, value) => {
    const escaped = simEscape(value);
    const raw = [...escaped].filter((c) => {
      const n = c.codePointAt(0)!;
      return n < 0x20 || (n >= 0x7f && n <= 0x9f) || n === 0x2028 || n === 0x2029;
    });
    expect(raw).toEqual([]);
    const commands = parseSimConsole(`kick 12 ${escaped}`);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toEqual(["kick", "12", value]);
    // And in the middle of a command.
    expect(parseSimConsole(`say ${escaped} end`)).toEqual([["say", value, "end"]]);
  });

  test("the sim's escape is simEscape", () => {
    expect(new SimGame().escape('a"b')).toBe(simEscape('a"b'));
    expect(simEscape("x; op me")).toBe('"x; op me"');
  });

  test("the console parser splits commands on ; and newlines and rejects raw control characters in quotes", () => {
    expect(parseSimConsole("say hi; op me\nkick 3")).toEqual([
      ["say", "hi"],
      ["op", "me"],
      ["kick", "3"],
    ]);
    expect(parseSimConsole(" ; ;  ")).toEqual([]);
    expect(() => parseSimConsole('say "a\nb"')).toThrow(/bad quoted/);
    expect(() => parseSimConsole('say "unclosed')).toThrow(/bad quoted/);
    expect(() => parseSimConsole('say "bad \\x escape"')).toThrow(/bad quoted/);
  });
});

describe("timelines", () => {
  test("playTimeline plays steps at their times and stops on abort", async () => {
    const { sim, clock, events } = setup();
    const ctl = new AbortController();
    const done = playTimeline(
      sim,
      {
        period: 1000,
        steps: [
          { at: 500, do: (s) => s.leave(alice.id) },
          { at: 0, do: (s) => s.join(alice) },
        ],
      },
      { clock, signal: ctl.signal, loop: true },
    );
    await clock.advance(0);
    expect(sim.isOnline(alice.id)).toBe(true);
    await clock.advance(500);
    expect(sim.isOnline(alice.id)).toBe(false);
    await clock.advance(500);
    expect(sim.isOnline(alice.id)).toBe(true);
    ctl.abort();
    await done;
    expect(events.map((e) => e.type)).toEqual(["player_connect", "player_disconnect", "player_connect"]);
  });

  test("a step that no longer fits is skipped", async () => {
    const { sim, clock } = setup();
    const logger = memoryLogger();
    const done = playTimeline(
      sim,
      {
        period: 10,
        steps: [
          { at: 0, do: (s) => s.leave(bob.id) },
          { at: 5, do: (s) => s.join(alice) },
        ],
      },
      { clock, logger },
    );
    await clock.advance(10);
    await done;
    expect(sim.isOnline(alice.id)).toBe(true);
    expect(logger.lines.some((l) => l.msg === "timeline step skipped")).toBe(true);
  });

  test("demoTimeline: seeded and new players, !dashboard, deaths; everyone gone at the end; loops", async () => {
    const { sim, clock, events } = setup();
    const script = demoTimeline();
    expect(script.period).toBeGreaterThanOrEqual(15_000);
    expect(script.period).toBeLessThanOrEqual(30_000);
    const ctl = new AbortController();
    const done = playTimeline(sim, script, { clock, signal: ctl.signal, loop: true });
    await clock.advance(script.period - 1);
    const types = new Set(events.map((e) => e.type));
    for (const t of ["player_connect", "player_spawn", "player_death", "chat_command", "player_disconnect"]) {
      expect(types.has(t as BridgeEvent["type"])).toBe(true);
    }
    expect(events.some((e) => e.type === "chat_command" && e.command === "dashboard")).toBe(true);
    const joined = events.flatMap((e) => (e.type === "player_connect" ? [e.player.id] : []));
    expect(joined).toContain(DEMO_PLAYERS.alice.id);
    expect(joined.every((id) => /^7656119\d{10}$/.test(id))).toBe(true);
    expect(sim.online()).toEqual([]);
    await clock.advance(1);
    expect(sim.isOnline(DEMO_PLAYERS.alice.id)).toBe(true);
    ctl.abort();
    await done;
  });
});
