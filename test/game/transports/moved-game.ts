/**
 * Run by q3-rcon.test.ts in a mount namespace of its own, where /etc/hosts is the test's file: the game's name moves
 * from 127.0.0.1 to 127.0.0.2 while Q3Rcon runs (a game container recreated with another address). Prints the
 * replies, where each command ran and what the transport said as JSON.
 */
import { writeFileSync } from "node:fs";
import { Q3Rcon } from "../../../lib/game/transports/q3-rcon.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { FakeQ3Server } from "./fake-q3-server.ts";

writeFileSync("/etc/hosts", "127.0.0.1 game.test\n");
const before = await FakeQ3Server.start({ host: "127.0.0.1" });
const after = await FakeQ3Server.start({ host: "127.0.0.2", port: before.port });
const logger = memoryLogger();
const rcon = new Q3Rcon({
  host: "game.test",
  port: before.port,
  password: "secret",
  quietMs: 50,
  timeoutMs: 3000,
  logger,
});
const replies: string[] = [];
const send = async (command: string) =>
  replies.push(await rcon.send(command).catch((e: { code: string }) => `error: ${e.code}`));
try {
  await send("say one");
  // The game moves: its old address is silent, its name says where it is now.
  await before.close();
  writeFileSync("/etc/hosts", "127.0.0.2 game.test\n");
  await send("say two");
  await send("say three");
  await send("say four");
} finally {
  await rcon.close();
  await after.close();
}
const ran = (s: FakeQ3Server) => s.commands.filter((c) => !c.startsWith("echo hubagent_"));
const said = logger.lines.filter((l) => l.level === "info").map((l) => l.msg);
console.log(JSON.stringify({ replies, before: ran(before), after: ran(after), said }));
