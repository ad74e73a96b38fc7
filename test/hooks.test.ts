import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventBus } from "../lib/events.ts";
import { attachHooks } from "../lib/hooks.ts";
import { memoryLogger } from "../lib/log.ts";
import { until } from "./support/until.ts";

let dir: string;
afterEach(() => {
  writeFileSync(join(dir, "go"), ""); // lets a hook still waiting finish
  rmSync(dir, { recursive: true, force: true });
});

const player = (id: string) => ({ id, name: `P${id}` });

test("a hook does not hold up the event: the bus goes on while it runs; its runs keep the events' order", async () => {
  dir = mkdtempSync(join(tmpdir(), "hub-hooks-"));
  const out = join(dir, "out.jsonl");
  const go = join(dir, "go");
  const logger = memoryLogger();
  const events = new EventBus(logger);
  // Each run waits until the test says go, then appends its stdin (the event's data) to out.jsonl.
  const script = `while [ ! -e '${go}' ]; do sleep 0.01; done; cat >> '${out}'`;
  attachHooks(events, { hub_ply_connected: `sh -c "${script}"` }, logger);

  // The emits resolve although no hook run can have finished yet: nothing waits for them.
  await events.emit("hub_ply_connected", { player: player("1") });
  await events.emit("hub_ply_connected", { player: player("2") });
  await events.emit("hub_ply_connected", { player: player("3") });
  expect(existsSync(out)).toBe(false);
  expect(events.busy).toBe(0);

  writeFileSync(go, "");
  /** The player ids of the complete lines written so far. */
  const ids = () =>
    (existsSync(out) ? readFileSync(out, "utf8") : "")
      .split("\n")
      .slice(0, -1)
      .map((l) => (JSON.parse(l) as { player: { id: string } }).player.id);
  await until(() => ids().length === 3, "three hook runs");
  expect(ids()).toEqual(["1", "2", "3"]);
  expect(JSON.parse(readFileSync(out, "utf8").split("\n")[0] as string)).toMatchObject({ event: "hub_ply_connected" });
  expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
});

test("a hook under a name that is no event is skipped with one line naming its key and the events", () => {
  dir = mkdtempSync(join(tmpdir(), "hub-hooks-"));
  const logger = memoryLogger();
  attachHooks(new EventBus(logger), { hub_player_joined: "true" }, logger.withTag("hooks"));
  const warned = logger.lines.filter((l) => l.level === "warn");
  expect(warned.map((l) => [l.tag, l.msg.split(":")[0]])).toEqual([
    ["hooks", "hooks.hub_player_joined is not an event"],
  ]);
  expect(warned[0]!.msg).toContain("hub_ply_connected");
});
