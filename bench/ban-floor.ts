/**
 * The least any `hub-agent ban` has to do, written without the agent or its libraries: one queue entry written
 * durably (a temp file, fsync, rename, fsync of the directory: the ban must survive a power cut before the command
 * says "queued"), then the service asked for the player's user. Refused (a closed port): one line out, exit 6, the
 * enqueue path's floor. Answered (HUB_FLOOR_BUNDLE names the serverbundle): the delivery's floor too, as `run` does
 * it for a command beside it: the attempt recorded durably before the request (the entry rewritten the same way:
 * an answer lost must not make the ban look never sent), the ban sent, one line out, exit 0. bench/startup.ts runs it
 * beside the real command: its ratio to the bare program is the floor that disk and network alone set.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";

const api = process.env.HUB_API_URL;
const headers = { authorization: `Bearer ${process.env.HUB_API_KEY}`, "content-type": "application/json" };
const dir = `${process.env.HUB_STORAGE_DIR}/queue/ban`;
mkdirSync(dir, { recursive: true });
const id = `${String(Date.now()).padStart(15, "0")}-${crypto.randomUUID()}`;
const entry = { v: 1, id, createdAt: Date.now(), attempts: 0, data: { reason: process.argv[2] } };

/** The entry, durably: temp file, its flush, the rename, the folder's flush. */
function put(value: object) {
  const tmp = `${dir}/${id}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  writeSync(fd, JSON.stringify(value));
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, `${dir}/${id}`);
  const dirFd = openSync(dir, "r");
  fsyncSync(dirFd);
  closeSync(dirFd);
}

put(entry);
const user = await fetch(`${api}/user/76561198000000001?type=STEAM`, { headers }).then(
  async (r) => (await r.json()) as { id: string },
  (e: Error) => e,
);
if (user instanceof Error || !process.env.HUB_FLOOR_BUNDLE) {
  console.log(JSON.stringify({ action: "ban", status: "queued", entry_id: id, error: String(user) }));
  process.exit(6);
}
put({ ...entry, attempts: 1, uncertain: true });
const body = { user_id: user.id, length: 3600, reason: process.argv[2], serverbundle_id: process.env.HUB_FLOOR_BUNDLE };
const ban = (await (await fetch(`${api}/ban/`, { method: "POST", headers, body: JSON.stringify(body) })).json()) as {
  id: string;
};
console.log(JSON.stringify({ action: "ban", status: "delivered", entry_id: id, ban_id: ban.id }));
process.exit(0);
