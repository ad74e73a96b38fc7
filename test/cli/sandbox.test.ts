// `hub-agent sandbox` through the compiled binary: it lists its seeded players and prints a configuration for itself;
// `hub-agent sandbox reward` adds a reward to a running one, and says in one line why it could not.
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hub, hubBinary, hubInBackground } from "./binary.ts";
import { until } from "../support/until.ts";

/** Starts `hub-agent sandbox --json` and reads the object it prints once listening. */
async function startSandbox(args: string[] = []) {
  const { proc: p, stdout } = await hubInBackground(["sandbox", "--json", ...args]);
  await until(() => stdout.text().endsWith("}\n"), "the sandbox's settings", {
    abort: () => (p.exitCode === null ? undefined : `sandbox exited with ${p.exitCode}`),
    diagnostics: stdout.text,
  });
  const info = JSON.parse(stdout.text()) as {
    url: string;
    key: string;
    server_id: string;
    players: { nick: string; id: string; user_id: string; notes: string[] }[];
    config: string;
  };
  const env = {
    HUB_API_URL: info.url,
    HUB_API_KEY: info.key,
    HUB_API_SERVER_ID: info.server_id,
    HUB_GAME_BRIDGE: "sim",
  };
  return { p, info, env };
}

describe("hub-agent sandbox", () => {
  test("lists its players and what the service holds for them, and prints a configuration that works", async () => {
    const { p, info, env } = await startSandbox();
    expect(info.players.map((x) => [x.nick, x.id])).toEqual([
      ["Alice", "76561198012345671"],
      ["Bob", "76561198087654322"],
      ["Carol", "76561198123456783"],
    ]);
    // The ban's length (what the README's walk speaks of) and what is left of it.
    expect(info.players[1]!.notes).toEqual(["banned for 7d (5d left): RDM x3"]);
    expect(info.players[2]!.notes[0]).toBe("VyHub admin");
    // The configuration it prints passes doctor as it is.
    const cwd = mkdtempSync(join(tmpdir(), "hub-cwd-"));
    await Bun.write(join(cwd, "hub-agent.toml"), info.config);
    const doctor = await hub(["doctor"], { cwd });
    expect(doctor.code).toBe(0);
    // Its own route is no part of the API it models.
    const openapi = (await (await fetch(`${info.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).some((x) => x.includes("_sandbox"))).toBe(false);

    // Adding a reward, and each way it can fail.
    const ok = await hubBinary(["sandbox", "reward", "76561198123456783", "say", "hi", "%nick%", "--json"], { env });
    expect(ok.code).toBe(0);
    const reward = JSON.parse(ok.stdout);
    expect(reward.user.username).toBe("Carol");
    expect(reward.reward.data.command).toBe("say hi %nick%");
    expect(reward.reward.on_event).toBe("DIRECT");
    const onConnect = await hub(["sandbox", "reward", "alice", "say welcome", "--event", "connect"], { env });
    expect(onConnect.code).toBe(0);
    expect(onConnect.stdout).toContain("added for Alice");
    expect(onConnect.stdout).toContain("it runs on their next connect");

    const unknown = await hub(["sandbox", "reward", "Zed", "say hi"], { env });
    expect([unknown.code, unknown.stderr.trim()]).toEqual([
      5,
      "error: no such player in the sandbox: use one of Alice, Bob, Carol",
    ]);
    const wrongKey = await hub(["sandbox", "reward", "Alice", "say hi"], { env: { ...env, HUB_API_KEY: "nope-nope" } });
    expect(wrongKey.code).toBe(3);
    expect(wrongKey.stderr).toContain("refused the API key");
    const event = await hub(["sandbox", "reward", "Alice", "say hi", "--event", "sometimes"], { env });
    expect([event.code, event.stderr.trim()]).toEqual([
      2,
      "error: --event sometimes is not a reward event: use direct, connect, spawn, death or disconnect",
    ]);
    const empty = await hub(["sandbox", "reward", "Alice", " "], { env });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("the command is empty");

    p.kill("SIGINT");
    expect(await p.exited).toBe(0);
    const gone = await hub(["sandbox", "reward", "Alice", "say hi"], { env });
    expect(gone.code).toBe(4);
    expect(gone.stderr).toContain("no sandbox answers at");
  });

  test("the empty seed has no players to list, and its configuration has none online", async () => {
    const { p, info, env } = await startSandbox(["--seed", "empty"]);
    expect(info.players).toEqual([]);
    expect(info.config).toContain('bridge = "sim"');
    expect(info.config).not.toContain("[game.sim]");
    const r = await hub(["sandbox", "reward", "Alice", "say hi"], { env });
    expect([r.code, r.stderr.trim()]).toEqual([
      5,
      "error: the sandbox has no players (it was started with --seed empty): start it with the example data",
    ]);
    p.kill("SIGINT");
    expect(await p.exited).toBe(0);
  });

  test("its help shows that reward is a subcommand it can do without", async () => {
    const help = await hub(["sandbox", "--help"]);
    expect(help.stdout).toContain("USAGE hub-agent sandbox [OPTIONS] [reward …]\n");
    expect((await hub(["queue", "--help"])).stdout).toContain("USAGE hub-agent queue [OPTIONS] status|retry|drop\n");
  });

  test("the human output: the players as a table, the configuration, and how to add a reward", async () => {
    const { proc: p, stdout } = await hubInBackground(["sandbox"]);
    await until(() => stdout.text().includes("Stop with Ctrl-C."), "the sandbox's introduction", {
      diagnostics: stdout.text,
    });
    const out = stdout.text();
    expect(out).toMatch(
      /^ {2}Bob {4}76561198087654322 {2}f82e6399-324e-49a6-a411-09f621b77325 {2}banned for 7d \(5d left\): RDM x3$/m,
    );
    expect(out).toContain("  hub-agent sandbox reward Alice 'say Thanks for your support, %nick%'");
    expect(out).toContain("  export HUB_GAME_BRIDGE=sim");
    p.kill("SIGINT");
    expect(await p.exited).toBe(0);
  });
});
