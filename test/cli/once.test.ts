import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox } from "../../lib/sandbox/index.ts";
import { hub } from "./binary.ts";
import { useSandbox } from "../support/sandbox.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));

test("run --once (cron): exit 6 while a ban waits for the service, 0 once it is delivered", async () => {
  const env = {
    HUB_API_URL: sb.url,
    HUB_API_KEY: sb.key,
    HUB_API_SERVER_ID: sb.serverId,
    HUB_STORAGE_DIR: mkdtempSync(join(tmpdir(), "hub-once-")),
  };
  expect((await hub(["run", "--once"], { env })).code).toBe(0); // caches the server record

  await sb.control.down();
  const ban = await hub(["ban", "76561198012345671", "30m", "griefing"], { env });
  expect(ban.code).toBe(6);
  const waiting = await hub(["run", "--once"], { env });
  expect(waiting.code).toBe(6);
  expect(waiting.stderr).toContain("not everything queued was delivered (ban: 1)");

  await sb.control.up();
  const done = await hub(["run", "--once"], { env });
  expect(done.code).toBe(0);
  const posts = sb.control.requests({ method: "POST", path: "/ban/" }).filter((r) => r.status === 200);
  expect(posts).toHaveLength(1);
  expect(posts[0]?.body).toMatchObject({ reason: "griefing" });
}, 60_000);
