/**
 * The least any `hub-agent ban` has to do on its enqueue path, written without the agent or its libraries: one
 * queue entry written durably (a temp file, fsync, rename, fsync of the directory: the ban must survive a power
 * cut before the command says "queued"), one request to the service refused by a closed port, one line out,
 * exit 6. bench/startup.ts runs it beside the real command: its ratio to the bare program is the floor that disk
 * and network alone set on this machine.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";

const dir = `${process.env.HUB_STORAGE_DIR}/queue/ban`;
mkdirSync(dir, { recursive: true });
const id = `${String(Date.now()).padStart(15, "0")}-${crypto.randomUUID()}`;
const tmp = `${dir}/${id}.tmp`;
const fd = openSync(tmp, "wx", 0o600);
writeSync(fd, JSON.stringify({ v: 1, id, createdAt: Date.now(), attempts: 0, data: { reason: process.argv[2] } }));
fsyncSync(fd);
closeSync(fd);
renameSync(tmp, `${dir}/${id}`);
const dirFd = openSync(dir, "r");
fsyncSync(dirFd);
closeSync(dirFd);
const error = await fetch(`${process.env.HUB_API_URL}/user/76561198000000001?type=STEAM`).then(
  () => undefined,
  (e: Error) => e.message,
);
console.log(JSON.stringify({ action: "ban", status: "queued", entry_id: id, error }));
process.exit(6);
