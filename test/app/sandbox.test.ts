// The sandbox operations of lib/app/sandbox.ts in-process: the in-memory service with its players and a
// configuration for it, and each outcome of giving a player a reward through its control route.
import { expect, test } from "bun:test";
import { addSandboxReward, openSandbox } from "../../lib/app/sandbox.ts";

test("openSandbox: its players and a configuration naming it; a port in use is an error, not a throw", async () => {
  const opened = await openSandbox({ port: 0, key: "try-key", seed: "examples" });
  if (!opened.ok) throw new Error(opened.error);
  const sb = opened.sandbox;
  try {
    expect(sb.players.map((p) => p.nick)).toEqual(["Alice", "Bob", "Carol"]);
    expect(sb.config).toContain(`url = ${JSON.stringify(sb.url)}`);
    expect(sb.config).toContain('key = "try-key"');
    expect(sb.config).toContain('players = ["76561198012345671:Alice"');
    const port = Number(new URL(sb.url).port);
    expect(await openSandbox({ port, seed: "empty" })).toMatchObject({ ok: false, error: expect.any(String) });
  } finally {
    await sb.stop();
  }
  const empty = await openSandbox({ port: 0, seed: "empty" });
  if (!empty.ok) throw new Error(empty.error);
  expect([empty.sandbox.players, empty.sandbox.config.includes("[game.sim]")]).toEqual([[], false]);
  await empty.sandbox.stop();
});

test("addSandboxReward: added; an unknown player, a refused key, no sandbox at the address, none at all", async () => {
  const opened = await openSandbox({ port: 0, key: "try-key", seed: "examples" });
  if (!opened.ok) throw new Error(opened.error);
  const { url, stop } = opened.sandbox;
  const api = { url, key: "try-key" };
  const reward = { player: "alice", command: "say hi %nick%", event: "CONNECT" };
  try {
    const added = await addSandboxReward(api, reward);
    expect(added).toMatchObject({ kind: "added", reward: { user: { username: "Alice" } } });
    expect(added.kind === "added" && added.reward.reward.on_event).toBe("CONNECT");
    expect(await addSandboxReward(api, { ...reward, player: "Zed" })).toEqual({
      kind: "unknown_player",
      known: ["Alice", "Bob", "Carol"],
    });
    expect(await addSandboxReward({ ...api, key: "nope" }, reward)).toMatchObject({ kind: "key_refused" });
    expect(await addSandboxReward({ ...api, url: `${url}/elsewhere` }, reward)).toMatchObject({ kind: "not_sandbox" });
  } finally {
    await stop();
  }
  expect(await addSandboxReward(api, reward)).toMatchObject({ kind: "unreachable", url: expect.stringContaining(url) });
});
