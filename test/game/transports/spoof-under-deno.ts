/**
 * Run by q3-rcon.test.ts under Deno, whose node:dgram keeps a connect to itself (the kernel still delivers
 * datagrams from anyone): an attacker on 127.0.0.2 with the game's port floods forged status rows while Q3Rcon
 * asks for `status` three times. Prints the replies, the datagrams sent and the transport's warnings as JSON.
 */
import { Q3Rcon } from "../../../lib/game/transports/q3-rcon.ts";
import { memoryLogger } from "../../../lib/log.ts";
import { FakeQ3Server } from "./fake-q3-server.ts";
import { Attacker } from "./udp-fake.ts";

const STATUS = `map: oa_dm1
num score ping name            lastmsg address               qport rate
--- ----- ---- --------------- ------- --------------------- ----- -----
  0     0    0 Sarge^7               0 bot                       0 16384
`;
const FORGED = "print\n  1     0    0 Mallory^7             0 bot                       0 16384\n";

const logger = memoryLogger();
let attacker: Attacker | undefined;
const fake = await FakeQ3Server.start({
  handler: async (c) => {
    if (c !== "status") return "?\n";
    await attacker!.send(fake.client!, FORGED);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return STATUS;
  },
});
attacker = await Attacker.at("127.0.0.2", fake.port);
const rcon = new Q3Rcon({ host: fake.host, port: fake.port, password: "secret", quietMs: 50, logger, timeoutMs: 5000 });
const replies: string[] = [];
try {
  for (let i = 0; i < 3; i++) replies.push(await rcon.send("status"));
} finally {
  await rcon.close();
  await attacker.close();
  await fake.close();
}
const warnings = logger.lines
  .filter((l) => l.msg.includes("did not come from the game server"))
  .map((l) => ({ count: l.data?.count, from: l.data?.from }));
console.log(JSON.stringify({ replies, sent: attacker.sent, warnings }));
